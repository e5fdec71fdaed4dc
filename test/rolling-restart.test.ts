// A rolling restart under load, as deployed: bench/rolling-restart.mjs with
// short settings (2 workers, each restarted twice, a few clients of each
// kind), its report read as JSON. Every check it makes must pass, and the
// figures must show that the restarts were real: each SIGTERM met a
// download, an SSE stream and a WebSocket on its worker, and what the
// clients saw follows from that.
import { test } from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { lacks } from './helpers/optional'

interface Check { name: string, ok: boolean, detail: string }
interface Restart {
  old: string
  exit: { code: number | null, signal: string | null }
  exitMs: number
  inflightAtSigterm: { download: number, sse: number, ws: number }
  serverOpenAtClose: { download: number, sse: number, ws: number, upload: number, work: number } | null
}
interface Report {
  node: string
  settings: Record<string, number>
  durationMs: number
  latency: { during: { n: number, p99: number | null }, outside: { n: number, p99: number | null } }
  retries: { total: number, resets: Record<string, number>, refused: Record<string, number> }
  counts: {
    requests: Record<string, number>
    uploadsRead: number
    uploadAttemptsFailed: number
    workAccepted: number
    workDone: number
    sseClients: number
    wsClients: number
    sseEvents: number
    sseConnections: number
    wsConnections: number
    wsEchoes: number
    wsClosed1001: number
  }
  restarts: Restart[]
  logs: { lines: number }
  clientErrors: Record<string, { count: number, examples: string[] }>
  checks: Check[]
  ok: boolean
}

const WORKERS = 2
const ROUNDS = 2
const GRACE = 10000
const ARGS = [
  '--json', `--workers=${WORKERS}`, `--rounds=${ROUNDS}`,
  '--plain=3', '--downloads=2', '--uploads=2', '--work=2', '--sse=3', '--ws=3',
  '--before=1000', '--after=800', '--gap=300',
  '--close-timeout=5000', `--grace=${GRACE}`, '--request-timeout=8000', '--deadline=45000'
]

const skip = lacks('close-with-grace') || lacks('eventsource') || lacks('undici') || lacks('ws') || lacks('hono/ws', 'defineWebSocketHelper')

test('a rolling restart of a cluster under load: what every client sees, and clean exits', { skip, timeout: 55000 }, async (t) => {
  const child = spawn(process.execPath, [join(__dirname, '..', 'bench', 'rolling-restart.mjs'), ...ARGS], { stdio: ['ignore', 'pipe', 'pipe'] })
  // SIGTERM: the harness then kills its workers before it exits.
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGTERM') })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
  t.equal(stderr, '', 'the harness wrote nothing to stderr')
  const report = JSON.parse(stdout) as Report
  t.comment(`Node ${report.node}, ${report.durationMs} ms; plain p99 ${report.latency.during.p99} ms during restarts, ${report.latency.outside.p99} ms outside; ${report.retries.total} retries`)

  // Every check of the harness, by name, so that a failure says which.
  const names = report.checks.map((check) => check.name)
  t.same(names, [
    'restarts',
    'in flight at each SIGTERM',
    'workers exit 0 within the grace delay',
    'nothing logged at error',
    'no client errors',
    'uploads refused were never read',
    'every waitUntil job ran',
    'SSE clients resume, no event lost or repeated',
    'WebSockets closed with 1001 and reconnect'
  ], 'the harness made every check')
  for (const check of report.checks) t.ok(check.ok, `${check.name}: ${check.detail}`)
  t.equal(report.ok, true, 'the report says every check passed')
  t.equal(code, 0, 'the harness exited 0')
  t.same(report.clientErrors, {}, 'no client error of any kind')

  // The restarts were real: each worker restarted twice, each SIGTERM met
  // streams, and each worker left cleanly within the grace delay.
  t.equal(report.restarts.length, WORKERS * ROUNDS, 'every worker restarted every round')
  for (const [i, restart] of report.restarts.entries()) {
    const at = restart.inflightAtSigterm
    t.ok(at.download >= 1 && at.sse >= 1 && at.ws >= 1, `restart ${i} (worker ${restart.old}): a download, an SSE stream and a WebSocket in flight at SIGTERM (${JSON.stringify(at)})`)
    t.ok(restart.serverOpenAtClose !== null && restart.serverOpenAtClose.sse >= 1 && restart.serverOpenAtClose.ws >= 1,
      `restart ${i}: the worker itself had an SSE stream and a WebSocket open when its close began (${JSON.stringify(restart.serverOpenAtClose)})`)
    t.same(restart.exit, { code: 0, signal: null }, `restart ${i}: the worker exited 0`)
    t.ok(restart.exitMs < GRACE, `restart ${i}: within the grace delay (${restart.exitMs} ms)`)
  }

  // What the clients saw follows from what was in flight.
  const { counts } = report
  const sum = (key: 'download' | 'sse' | 'ws'): number => report.restarts.reduce((total, restart) => total + restart.inflightAtSigterm[key], 0)
  t.ok(counts.wsClosed1001 >= sum('ws'), `every WebSocket open at a SIGTERM closed with 1001 (${counts.wsClosed1001} closes, ${sum('ws')} open at the SIGTERMs)`)
  t.ok(counts.wsConnections >= counts.wsClients + sum('ws'), `and reconnected (${counts.wsConnections} connections for ${counts.wsClients} clients)`)
  t.ok(counts.sseConnections >= counts.sseClients + sum('sse'), `every SSE stream open at a SIGTERM reconnected (${counts.sseConnections} connections for ${counts.sseClients} clients)`)
  for (const kind of ['text', 'json', 'download', 'upload', 'work']) {
    t.ok(counts.requests[kind] > 0, `${kind} requests were answered (${counts.requests[kind]})`)
  }
  t.ok(counts.sseEvents > 0 && counts.wsEchoes > 0, `events and echoes flowed (${counts.sseEvents} events, ${counts.wsEchoes} echoes)`)
  t.ok(counts.uploadsRead >= counts.requests.upload, `each answered upload was read by a server (${counts.uploadsRead} read, ${counts.requests.upload} answered)`)
  t.ok(counts.workAccepted > 0 && counts.workDone >= counts.workAccepted, `each accepted waitUntil job ran (${counts.workDone} of ${counts.workAccepted})`)
  t.ok(report.latency.during.n > 0 && report.latency.outside.n > 0, `plain requests were timed during the restarts (${report.latency.during.n}) and outside them (${report.latency.outside.n})`)
  t.ok(report.logs.lines > 0, 'the workers\' log lines reached the primary')
})
