// Soak test: many requests of the benchmark's mixed traffic, plus POST bodies
// and small streams, on keep-alive connections; then checks that the server
// gave back what it took. Run it with
//
//   node --expose-gc bench/soak.mjs [--requests=200000] [--connections=10] [--rounds=4]
//
// after `npm run build`. It prints one JSON verdict and exits 1 if a check
// failed (2 if it could not run). test/soak.test.ts runs a short one in CI.
//
// The server runs in a child process: the heap and the handles measured must
// be the server's alone. autocannon in the same process would add its own
// garbage (histograms, request buffers) and its own sockets to both counts,
// blurring the baseline and able to hide a leak or fake one. The child is
// started with --expose-gc whatever flags this process has.
//
// Checks, after a warm-up and a baseline taken at rest (gc run several times):
//  - every request answered 2xx: no error, timeout or non-2xx in autocannon,
//    no status >= 400 and no onError on the server; a probe connection checks
//    exact bodies and headers throughout;
//  - heapUsed back within 10% of the baseline, plus 1 MiB of absolute slack
//    (V8 compiles and keeps code for paths first taken under load, and on a
//    heap of a few MB that alone is several percent);
//  - active handles (process.getActiveResourcesInfo()) within 10% of the
//    baseline, and the same open connections (the probe's only);
//  - no listener growth: the same listeners on the HTTP server, on the probe
//    connection's server-side socket (kept open throughout) and on process.
import http from 'node:http'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { mulberry32 } from './cases.mjs'
import { startChild } from './proc.mjs'

const HEAP_RATIO = 1.10
const HEAP_SLACK = 1024 * 1024
const HANDLE_RATIO = 1.10
const MAX_LIFETIME_MS = 20 * 60_000 // both processes exit by themselves after this, whatever happens

// ------------------------------------------------------------------ server

async function runServer () {
  const [{ default: Fastify }, { default: fastifyHono }, { stream, streamSSE }, { createApp }, { PREFIX }, { serveParent }] = await Promise.all([
    import('fastify'), import('fastify-hono'), import('hono/streaming'), import('./app.mjs'), import('./payloads.mjs'), import('./proc.mjs')
  ])
  if (typeof globalThis.gc !== 'function') throw new Error('the soak server needs --expose-gc')

  // The benchmark's app, plus two small streams.
  const app = createApp()
  app.get('/soak/stream', (c) => stream(c, async (s) => {
    for (let i = 0; i < 3; i++) await s.write(`chunk ${i}\n`)
  }))
  app.get('/soak/sse', (c) => streamSSE(c, async (s) => {
    for (let i = 0; i < 5; i++) await s.writeSSE({ data: `event ${i}`, id: String(i) })
  }))

  const fastify = Fastify({ logger: false })
  const statuses = {}
  let errors = 0
  fastify.addHook('onResponse', (request, reply, done) => {
    statuses[reply.statusCode] = (statuses[reply.statusCode] ?? 0) + 1
    done()
  })
  fastify.addHook('onError', (request, reply, err, done) => { errors++; done() })
  await fastify.register(fastifyHono, { app, prefix: PREFIX })
  await fastify.listen({ port: 0, host: '127.0.0.1' })
  const server = fastify.server
  const sockets = new Set()
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })

  serveParent(async (message) => {
    switch (message.type) {
      case 'address': return { port: server.address().port }
      case 'connections': return { open: sockets.size }
      case 'snapshot': {
        // Several collections, with turns of the event loop between them, so
        // that weak callbacks and finalizers run and their garbage goes too.
        for (let i = 0; i < 6; i++) {
          globalThis.gc()
          await sleep(10)
        }
        const memory = process.memoryUsage()
        const resources = process.getActiveResourcesInfo()
        const byType = {}
        for (const type of resources) byType[type] = (byType[type] ?? 0) + 1
        const probe = [...sockets].find((socket) => socket.remotePort === message.probePort)
        return {
          heapUsed: memory.heapUsed,
          heapTotal: memory.heapTotal,
          external: memory.external,
          rss: memory.rss,
          handles: resources.length,
          handlesByType: byType,
          openConnections: sockets.size,
          listeners: {
            server: listenerCounts(server),
            probeSocket: probe === undefined ? null : listenerCounts(probe),
            process: listenerCounts(process)
          },
          statuses: { ...statuses },
          errors
        }
      }
      default: throw new Error(`unknown message ${message.type}`)
    }
  }, MAX_LIFETIME_MS)
}

function listenerCounts (emitter) {
  const counts = {}
  for (const name of emitter.eventNames()) counts[String(name)] = emitter.listenerCount(name)
  return counts
}

// ------------------------------------------------------------- load side

function parseArgs () {
  const options = { requests: 200_000, connections: 10, rounds: 4, warmup: undefined }
  for (const arg of process.argv.slice(2)) {
    const match = /^--(requests|connections|rounds|warmup)=(\d+)$/.exec(arg)
    if (match === null) throw new Error(`unknown argument ${arg} (known: --requests=N --connections=N --rounds=N --warmup=N)`)
    options[match[1]] = Number(match[2])
  }
  options.warmup ??= Math.min(20_000, Math.max(5_000, Math.round(options.requests / 10)))
  if (options.requests < options.rounds || options.rounds < 1 || options.connections < 1) throw new Error('need requests >= rounds >= 1 and connections >= 1')
  return options
}

/** The child: the server, with request/reply IPC (bench/proc.mjs); it exits when this process goes. */
function startServer () {
  return startChild(fileURLToPath(import.meta.url), ['--server'], null, ['--expose-gc'])
}

/**
 * The traffic: 70% the benchmark's mixed case (parameter routes behind
 * cors() and a c.header() after next(), text, JSON), 15% POST JSON echo, 10%
 * a small stream(), 5% a small streamSSE(). A fixed seeded sequence.
 */
function trafficSequence (mixedPaths, PREFIX, ECHO_BODY) {
  const random = mulberry32(0x50a4)
  const paths = mixedPaths()
  const sequence = []
  for (let i = 0; i < 8192; i++) {
    const pick = random()
    if (pick < 0.70) sequence.push({ kind: 'mixed', method: 'GET', path: paths[i] })
    else if (pick < 0.85) sequence.push({ kind: 'echo', method: 'POST', path: `${PREFIX}/echo`, headers: { 'content-type': 'application/json' }, body: ECHO_BODY })
    else if (pick < 0.95) sequence.push({ kind: 'stream', method: 'GET', path: `${PREFIX}/soak/stream` })
    else sequence.push({ kind: 'sse', method: 'GET', path: `${PREFIX}/soak/sse` })
  }
  return sequence
}

async function load (autocannon, port, sequence, amount, connections, mix) {
  let index = 0
  const mask = sequence.length - 1
  const run = autocannon({
    url: `http://127.0.0.1:${port}/`,
    connections,
    amount,
    timeout: 10,
    requests: [{
      setupRequest (request) {
        const next = sequence[index++ & mask]
        mix[next.kind]++
        request.method = next.method
        request.path = next.path
        request.headers = next.headers ?? {}
        request.body = next.body
        return request
      }
    }]
  })
  // Bounded in time whatever the server does (and the whole run by MAX_LIFETIME_MS).
  const cap = setTimeout(() => run.stop(), MAX_LIFETIME_MS / 2)
  const result = await run
  clearTimeout(cap)
  return result
}

/**
 * A keep-alive connection kept open from before the baseline to after the
 * load, checking exact answers: its server-side socket is where per-request
 * listeners would pile up if a request left one behind.
 */
function createProbe (port, payloads) {
  const { PREFIX, TEXT, JSON_OBJECT, ECHO_BODY, MIDDLEWARE_HEADER } = payloads
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const localPorts = new Set()
  const failures = []
  let checks = 0
  const get = (method, path, body) => new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path, agent, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      localPorts.add(res.socket.localPort)
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => { text += chunk })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }))
      res.on('error', reject)
    })
    request.setTimeout(10_000, () => request.destroy(new Error(`probe ${path} timed out`)))
    request.on('error', reject)
    request.end(body)
  })
  const expectations = [
    ['GET', `${PREFIX}/api/users/7`, undefined, (r) => r.text === '{"resource":"users","id":"7"}' && r.headers[MIDDLEWARE_HEADER[0]] === MIDDLEWARE_HEADER[1] && r.headers['access-control-allow-origin'] === '*'],
    ['GET', `${PREFIX}/text`, undefined, (r) => r.text === TEXT],
    ['GET', `${PREFIX}/json`, undefined, (r) => r.text === JSON.stringify(JSON_OBJECT)],
    ['POST', `${PREFIX}/echo`, ECHO_BODY, (r) => r.text === ECHO_BODY],
    ['GET', `${PREFIX}/soak/stream`, undefined, (r) => r.text === 'chunk 0\nchunk 1\nchunk 2\n'],
    ['GET', `${PREFIX}/soak/sse`, undefined, (r) => r.text === [0, 1, 2, 3, 4].map((i) => `data: event ${i}\nid: ${i}\n\n`).join('')]
  ]
  return {
    async check () {
      for (const [method, path, body, ok] of expectations) {
        checks++
        try {
          const res = await get(method, path, body)
          if (res.status !== 200 || !ok(res)) failures.push(`${method} ${path}: ${res.status} ${JSON.stringify(res.text.slice(0, 120))}`)
        } catch (err) {
          failures.push(`${method} ${path}: ${err.message}`)
        }
      }
    },
    /** The probe's client-side port: the server-side socket's remote port. */
    get localPort () { return [...localPorts][0] },
    get socketsUsed () { return localPorts.size },
    get checks () { return checks },
    failures,
    close () { agent.destroy() }
  }
}

async function waitForConnections (server, open, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  let last
  do {
    last = (await server.call({ type: 'connections' })).open
    if (last <= open) return last
    await sleep(50)
  } while (Date.now() < deadline)
  return last
}

const mb = (bytes) => Math.round(bytes / 1024 / 10.24) / 100

async function main () {
  setTimeout(() => {
    console.log(JSON.stringify({ verdict: 'error', error: `still running after ${MAX_LIFETIME_MS / 60_000} minutes` }))
    process.exit(2)
  }, MAX_LIFETIME_MS).unref()
  const options = parseArgs()
  const [{ default: autocannon }, { mixedPaths }, payloads] = await Promise.all([
    import('autocannon'), import('./cases.mjs'), import('./payloads.mjs')
  ])
  const sequence = trafficSequence(mixedPaths, payloads.PREFIX, payloads.ECHO_BODY)
  const server = startServer()
  const failures = []
  let probe
  try {
    const { port } = await server.call({ type: 'address' })
    probe = createProbe(port, payloads)
    await probe.check()

    // Warm-up: the JIT, Fastify's and Hono's caches, the lazy paths.
    const warmMix = { mixed: 0, echo: 0, stream: 0, sse: 0 }
    const warm = await load(autocannon, port, sequence, options.warmup, options.connections, warmMix)
    if (warm.errors + warm.timeouts + warm.non2xx > 0) failures.push(`warm-up: ${warm.errors} errors, ${warm.timeouts} timeouts, ${warm.non2xx} non-2xx`)
    await waitForConnections(server, 1, 10_000)
    await probe.check()
    const baseline = await server.call({ type: 'snapshot', probePort: probe.localPort })

    // The load, in rounds (connections close and reopen between them), with
    // the probe checking exact answers alongside.
    const mix = { mixed: 0, echo: 0, stream: 0, sse: 0 }
    const totals = { requests: 0, ok: 0, non2xx: 0, errors: 0, timeouts: 0, resets: 0 }
    const rounds = []
    const started = process.hrtime.bigint()
    for (let round = 0; round < options.rounds; round++) {
      const amount = Math.floor(options.requests / options.rounds) + (round < options.requests % options.rounds ? 1 : 0)
      // A property rather than a local: the probing loop reads a flag that
      // this function changes once the load is done.
      const state = { loading: true }
      const probing = (async () => { while (state.loading) { await probe.check(); await sleep(250) } })()
      const result = await load(autocannon, port, sequence, amount, options.connections, mix)
      state.loading = false
      await probing
      totals.requests += result.requests.total
      totals.ok += result['2xx']
      totals.non2xx += result.non2xx
      totals.errors += result.errors
      totals.timeouts += result.timeouts
      totals.resets += result.resets ?? 0
      const open = await waitForConnections(server, 1, 10_000)
      const snapshot = await server.call({ type: 'snapshot', probePort: probe.localPort })
      rounds.push({ requests: result.requests.total, heapUsedMB: mb(snapshot.heapUsed), handles: snapshot.handles, openConnections: open })
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    await probe.check()
    const after = await server.call({ type: 'snapshot', probePort: probe.localPort })

    // ---- the verdict
    if (totals.ok !== options.requests) failures.push(`${totals.ok} of ${options.requests} requests answered 2xx`)
    if (totals.non2xx + totals.errors + totals.timeouts > 0) failures.push(`load: ${totals.errors} errors, ${totals.timeouts} timeouts, ${totals.non2xx} non-2xx`)
    const errorStatuses = Object.entries(after.statuses).filter(([status]) => Number(status) >= 400)
    if (errorStatuses.length > 0) failures.push(`the server answered ${JSON.stringify(Object.fromEntries(errorStatuses))}`)
    if (after.errors > 0) failures.push(`${after.errors} onError calls on the server`)
    if (probe.failures.length > 0) failures.push(`probe: ${probe.failures.slice(0, 5).join('; ')}`)
    if (probe.socketsUsed !== 1) failures.push(`the probe needed ${probe.socketsUsed} connections: the server closed a keep-alive connection`)

    const heapLimit = baseline.heapUsed * HEAP_RATIO + HEAP_SLACK
    if (after.heapUsed > heapLimit) failures.push(`heapUsed ${mb(after.heapUsed)} MB after the load, over ${mb(heapLimit)} MB (baseline ${mb(baseline.heapUsed)} MB)`)
    const handleLimit = Math.floor(baseline.handles * HANDLE_RATIO)
    if (after.handles > handleLimit) failures.push(`${after.handles} active handles after the load, over ${handleLimit} (baseline ${baseline.handles}: ${JSON.stringify(after.handlesByType)})`)
    if (after.openConnections !== baseline.openConnections) failures.push(`${after.openConnections} open connections after the load, ${baseline.openConnections} before`)
    if (baseline.listeners.probeSocket === null || after.listeners.probeSocket === null) failures.push('the probe connection was not found on the server')
    for (const where of ['server', 'probeSocket', 'process']) {
      if (JSON.stringify(after.listeners[where]) !== JSON.stringify(baseline.listeners[where])) {
        failures.push(`listeners on ${where} changed: ${JSON.stringify(baseline.listeners[where])} → ${JSON.stringify(after.listeners[where])}`)
      }
    }

    const verdict = {
      verdict: failures.length === 0 ? 'pass' : 'fail',
      node: process.version,
      requests: { target: options.requests, completed2xx: totals.ok, non2xx: totals.non2xx, errors: totals.errors, timeouts: totals.timeouts, connections: options.connections, rounds: options.rounds, warmup: options.warmup },
      mix,
      durationS: Math.round(seconds * 10) / 10,
      requestsPerS: Math.round(totals.requests / seconds),
      heap: {
        baselineMB: mb(baseline.heapUsed),
        afterMB: mb(after.heapUsed),
        limitMB: mb(heapLimit),
        rule: `after <= baseline * ${HEAP_RATIO} + ${HEAP_SLACK / 1024 / 1024} MiB`,
        rounds: rounds.map((r) => r.heapUsedMB),
        rssMB: { baseline: mb(baseline.rss), after: mb(after.rss) }
      },
      handles: { baseline: baseline.handles, after: after.handles, limit: handleLimit, baselineByType: baseline.handlesByType, afterByType: after.handlesByType },
      connections: { baseline: baseline.openConnections, after: after.openConnections },
      listeners: { server: after.listeners.server, probeSocket: after.listeners.probeSocket, unchanged: !failures.some((f) => f.startsWith('listeners')) },
      probe: { checks: probe.checks, failures: probe.failures.length, keptOneConnection: probe.socketsUsed === 1 },
      serverStatuses: after.statuses,
      failures
    }
    console.log(JSON.stringify(verdict))
    process.exitCode = failures.length === 0 ? 0 : 1
  } finally {
    probe?.close()
    await server.stop()
  }
}

// Last, so that every declaration above is initialized before it runs.
if (process.argv.includes('--server')) {
  await runServer()
} else {
  await main().catch((err) => {
    console.log(JSON.stringify({ verdict: 'error', error: err?.stack ?? String(err) }))
    process.exit(2)
  })
}
