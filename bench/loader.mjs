// The load generator, in its own process (pinned to the other core): runs
// autocannon against one server for one case when asked.
import autocannon from 'autocannon'
import { caseById, mixedPaths } from './cases.mjs'
import { serveParent } from './proc.mjs'

// The mixed case's requests: a fixed list that every connection cycles
// through, each request built once by autocannon when the run starts. (A
// setupRequest hook that picks the next path instead makes autocannon build
// every request anew and deep-clone its context: that capped the load at
// about 18k requests/s on this machine, below what the fast variants serve,
// and a server waiting on its load generator pays more CPU per request.)
const MIXED_REQUESTS = 1024
let mixed

function requestsFor (testCase) {
  if (!testCase.mixed) return undefined
  mixed ??= mixedPaths().slice(0, MIXED_REQUESTS).map((path) => ({ method: 'GET', path }))
  return mixed
}

/** Every case in turn on each connection: warms up all of a server's code paths at once. */
function warmupRequests (caseIds) {
  return caseIds.map(caseById).flatMap((testCase) => requestsFor(testCase) ?? [{
    method: testCase.method, path: testCase.path, headers: testCase.headers, body: testCase.body
  }])
}

async function load ({ port, caseId, caseIds, duration, amount, maxSeconds, connections }) {
  // One case, or (for the warm-up) all the given cases mixed.
  const testCase = caseId === undefined ? undefined : caseById(caseId)
  const started = process.hrtime.bigint()
  const run = autocannon({
    url: `http://127.0.0.1:${port}${testCase?.path ?? '/'}`,
    method: testCase?.method,
    headers: testCase?.headers,
    body: testCase?.body,
    requests: testCase === undefined ? warmupRequests(caseIds) : requestsFor(testCase),
    connections,
    // A request count or a duration: autocannon rejects an undefined duration.
    ...(amount === undefined ? { duration } : { amount }),
    // autocannon only stops on a sample tick (default 1 s): tick often, so
    // short windows end on time.
    sampleInt: 50,
    timeout: 10
  })
  // A request count bounded in time: a slow or loaded server still finishes.
  const cap = maxSeconds === undefined ? undefined : setTimeout(() => run.stop(), maxSeconds * 1000)
  const result = await run
  clearTimeout(cap)
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  return {
    requests: result.requests.total,
    rps: result.requests.total / seconds,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts
  }
}

serveParent(async (message) => {
  if (message.type !== 'load') throw new Error(`unknown message ${message.type}`)
  return load(message)
}, 20 * 60_000)
