// A rolling restart under load, as deployed: a node:cluster primary runs
// --workers Fastify servers (rolling-worker.mjs: the Hono app mounted under
// /v2, under close-with-grace) and restarts each in turn, --rounds times:
// SIGTERM the worker, fork a replacement, wait until it listens (and the old
// one has exited), next worker. Clients in this process keep a mix going on
// keep-alive connections meanwhile: plain text and JSON requests, 1 MiB
// streamed downloads, 256 KiB uploads, SSE streams (the eventsource
// package), WebSocket echoes and requests whose job runs on in waitUntil.
//
// It checks what a client of a well-behaved rolling restart may expect:
// every response a server began arrives whole and intact; an upload is
// answered or refused before any server read it, and retried; an error on a
// kept-alive connection the server closed while idle happens only when the
// socket was reused, and is retried once, as browsers do; SSE clients
// resume from their Last-Event-ID with no event lost or repeated;
// WebSockets are closed with 1001 and reconnect; every waitUntil job that
// was accepted ran; each worker exits 0 within the grace delay, and nothing
// is logged at error. It measures the p99 latency of the plain requests
// during the restarts and outside them.
//
//   node bench/rolling-restart.mjs [--json] [--workers=2] [--rounds=5] ...
//
// Prints a summary (or one JSON object with --json); exits 1 when a check
// fails. See the options below; the test runs it with short settings.
import cluster from 'node:cluster'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request as httpRequest } from 'node:http'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { EventSource } from 'eventsource'
import { Agent as FetchAgent, fetch } from 'undici'
import WebSocket from 'ws'
import { DOWNLOAD_CHUNK_SIZE, DOWNLOAD_CHUNKS, downloadDigest, eventData } from './rolling-shared.mjs'

const defaults = {
  workers: 2, // at least 2: one keeps listening while another restarts
  rounds: 5, // each worker restarted this many times
  plain: 6, // loops of plain GETs (text, JSON in turn)
  downloads: 3, // loops of 1 MiB streamed downloads
  uploads: 3, // loops of 256 KiB uploads
  work: 2, // loops of requests that leave a job to waitUntil
  sse: 4, // SSE clients
  ws: 4, // WebSocket clients
  pause: 5, // ms each HTTP loop waits between two requests
  before: 3000, // ms of load before the first restart
  after: 3000, // ms of load after the last
  gap: 1000, // ms between a replacement listening and the next SIGTERM
  inflightTimeout: 5000, // ms to wait for a download, an SSE stream and a WebSocket on the worker to restart
  closeTimeout: 5000, // the plugin's closeTimeout
  grace: 10000, // close-with-grace's delay
  requestTimeout: 10000, // ms after which a request with no complete answer counts as hung
  deadline: 120000 // ms after which the run gives up
}

const UPLOAD_SIZE = 256 * 1024
const DOWNLOAD_SIZE = DOWNLOAD_CHUNK_SIZE * DOWNLOAD_CHUNKS
const DOWNLOAD_DIGEST = downloadDigest()
/** Refusals (503) a request takes before it counts as failed. */
const MAX_REFUSALS = 20
const WS_ECHO_PAUSE = 10
const WS_RECONNECT_DELAY = 50
/** Ms without an SSE stream or a WebSocket on the worker to restart before another client of that kind is added. */
const ADD_CLIENT_AFTER = 250

function parseArgs (argv) {
  const settings = { ...defaults, json: false, naiveClose: false }
  for (const arg of argv) {
    if (arg === '--json') { settings.json = true; continue }
    if (arg === '--naive-close') { settings.naiveClose = true; continue }
    const match = /^--([a-z-]+)=(\d+)$/.exec(arg)
    const name = match?.[1].replace(/-([a-z])/g, (_, letter) => letter.toUpperCase())
    if (match === null || !(name in defaults)) throw new Error(`unknown option ${arg} (options: --json, --naive-close, ${Object.keys(defaults).map((key) => `--${key.replace(/[A-Z]/g, (letter) => '-' + letter.toLowerCase())}=N`).join(', ')})`)
    settings[name] = Number(match[2])
  }
  if (settings.workers < 2) throw new Error('--workers must be at least 2: one must listen while another restarts')
  return settings
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const now = () => performance.now()
const sha256 = (buffer) => createHash('sha256').update(buffer).digest('hex')

async function freePort () {
  const server = createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

function quantile (sorted, q) {
  if (sorted.length === 0) return null
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]
}

function summary (latencies) {
  const sorted = latencies.slice().sort((a, b) => a - b)
  const round = (value) => value === null ? null : Math.round(value * 100) / 100
  return { n: sorted.length, p50: round(quantile(sorted, 0.5)), p99: round(quantile(sorted, 0.99)), max: round(sorted.at(-1) ?? null) }
}

async function main () {
  const settings = parseArgs(process.argv.slice(2))
  const startedAt = now()
  const dir = mkdtempSync(join(tmpdir(), 'rolling-restart-'))
  const uploadLog = join(dir, 'uploads.log')
  const workLog = join(dir, 'work.log')
  writeFileSync(uploadLog, '')
  writeFileSync(workLog, '')
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`

  // --- Workers -------------------------------------------------------------
  const logs = { lines: 0, byLevel: {}, errors: [], stderr: [], other: [], closing: new Map(), closeCalled: new Map(), serverClose: new Map() }
  const workers = new Map() // cluster id -> { worker, listening, exited }
  cluster.setupPrimary({ exec: fileURLToPath(new URL('rolling-worker.mjs', import.meta.url)), silent: true })

  function fork () {
    const worker = cluster.fork({
      PORT: String(port),
      CLOSE_TIMEOUT: String(settings.closeTimeout),
      GRACE_DELAY: String(settings.grace),
      UPLOAD_LOG: uploadLog,
      WORK_LOG: workLog,
      NAIVE_CLOSE: settings.naiveClose ? '1' : '0'
    })
    const id = String(worker.id)
    const entry = { id, worker, forkedAt: now() }
    entry.exited = new Promise((resolve) => worker.once('exit', (code, signal) => resolve({ code, signal, at: now() })))
    entry.listening = new Promise((resolve, reject) => {
      worker.once('listening', () => resolve(now()))
      entry.exited.then(({ code, signal }) => reject(new Error(`worker ${id} exited (code ${code}, signal ${signal}) before it listened:\n${logs.stderr.join('\n')}`)))
    })
    entry.listening.catch(() => {})
    createInterface({ input: worker.process.stdout }).on('line', (line) => {
      let record
      try { record = JSON.parse(line) } catch { logs.other.push(`worker ${id}: ${line}`); return }
      logs.lines++
      logs.byLevel[record.level] = (logs.byLevel[record.level] ?? 0) + 1
      if (record.level >= 50) logs.errors.push(record)
      if (record.event === 'closing') logs.closing.set(id, { open: record.open, at: record.time })
      if (record.event === 'fastify.close') logs.closeCalled.set(id, record.time)
      if (record.event === 'server.close') logs.serverClose.set(id, record.time)
    })
    createInterface({ input: worker.process.stderr }).on('line', (line) => { logs.stderr.push(`worker ${id}: ${line}`) })
    workers.set(id, entry)
    return entry
  }

  // Stopped from outside (a test's timeout, Ctrl-C): take the workers along.
  // A worker left without its primary exits by itself, unless its logger is
  // stuck flushing lines it could not write to the closed pipe: the pino
  // destination Fastify 5 installs here (sonic-boom 4.2.1) retries an EPIPE
  // at exit every 100 ms for good.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      for (const { worker } of workers.values()) worker.process.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
      process.exit(1)
    })
  }

  const deadline = setTimeout(() => {
    process.stderr.write(`rolling-restart: gave up after ${settings.deadline} ms\n`)
    for (const { worker } of workers.values()) worker.process.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
    process.exit(1)
  }, settings.deadline)
  deadline.unref()

  const slots = []
  for (let i = 0; i < settings.workers; i++) slots.push(fork())
  await Promise.all(slots.map((entry) => entry.listening))

  // --- Clients -------------------------------------------------------------
  const agent = new Agent({ keepAlive: true })
  // A retry after a reset goes out on a new connection. The other idle
  // sockets to the worker that closed were closed with the one that failed,
  // and a browser checks that a pooled socket is still open before reusing
  // it; Node's Agent learns of the close only when its events are processed,
  // so it could hand the retry another dead socket.
  const freshAgent = new Agent({ keepAlive: false })
  const stats = {
    requests: {}, // kind -> answered requests
    resets: {}, // kind -> retries after a reset of a reused socket
    refused: {}, // kind -> retries after a 503 (server closing)
    errors: {} // kind -> { count, examples }: anything else, a failure
  }
  const bump = (table, kind) => { table[kind] = (table[kind] ?? 0) + 1 }
  const plainLatencies = [] // { start, end, ms, retried }
  const inflight = { download: new Map(), sse: new Map(), ws: new Map() } // client -> worker id
  const uploads = { failed: [], answered: [] } // attempt ids
  const accepted = [] // ids of work the server accepted (200)
  const countOn = (kind, worker) => [...inflight[kind].values()].filter((id) => id === worker).length
  const phase = { stopping: false }
  let lastSigterm = -Infinity

  /** One HTTP request; resolves with the whole response, rejects with a tagged error. */
  function attempt ({ method = 'GET', path, headers, body, onResponse, fresh = false }) {
    return new Promise((resolve, reject) => {
      let settled = false
      const req = httpRequest({ host: '127.0.0.1', port, method, path, agent: fresh ? freshAgent : agent, headers })
      const fail = (err, cut) => {
        if (settled) return
        settled = true
        err.reusedSocket = req.reusedSocket
        err.bodySent = req.writableFinished
        err.cut = cut
        reject(err)
      }
      const timer = setTimeout(() => {
        fail(Object.assign(new Error(`no complete answer within ${settings.requestTimeout} ms`), { code: 'ERR_HUNG' }), false)
        req.destroy()
      }, settings.requestTimeout)
      req.on('close', () => clearTimeout(timer))
      req.on('error', (err) => fail(err, false))
      req.on('response', (res) => {
        onResponse?.(res)
        const chunks = []
        res.on('data', (chunk) => chunks.push(chunk))
        res.on('aborted', () => fail(Object.assign(new Error('response aborted'), { code: 'ERR_ABORTED' }), true))
        res.on('error', (err) => fail(err, true))
        res.on('end', () => {
          if (settled) return
          if (!res.complete) return fail(Object.assign(new Error('response incomplete'), { code: 'ERR_INCOMPLETE' }), true)
          settled = true
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), reused: req.reusedSocket })
        })
        res.on('close', () => fail(Object.assign(new Error('response closed before its end'), { code: 'ERR_CUT' }), true))
      })
      req.end(body)
    })
  }

  /**
   * A request with the retries a browser or a careful client makes: once
   * after a reset of a reused keep-alive socket (the server closed it while
   * idle), on a new connection, and after a 503 with Connection: close (the
   * server was closing).
   * `onAttemptFailed(n)` hears of each attempt that was not answered.
   */
  async function call (kind, options, onAttemptFailed) {
    let resets = 0
    let refusals = 0
    let fresh = false
    const history = []
    for (let n = 0; ; n++) {
      const opts = typeof options === 'function' ? options(n) : options
      const sinceSigterm = Math.round(now() - lastSigterm)
      try {
        const res = await attempt(fresh ? { ...opts, fresh } : opts)
        if (res.status === 503 && res.headers.connection === 'close' && refusals < MAX_REFUSALS) {
          refusals++
          history.push('503')
          bump(stats.refused, kind)
          onAttemptFailed?.(n)
          continue
        }
        bump(stats.requests, kind)
        res.retried = n > 0
        return res
      } catch (err) {
        err.history = [...history, fresh ? 'on a new connection' : 'through the keep-alive agent']
        err.sinceSigterm = sinceSigterm
        onAttemptFailed?.(n)
        if (!err.cut && err.reusedSocket && (err.code === 'ECONNRESET' || err.message === 'socket hang up') && resets === 0) {
          resets++
          history.push('reset')
          bump(stats.resets, kind)
          fresh = true
          continue
        }
        throw err
      }
    }
  }

  const failure = (kind, what) => {
    const entry = stats.errors[kind] ??= { count: 0, examples: [] }
    entry.count++
    if (entry.examples.length < 3) entry.examples.push(what)
  }
  const describe = (err) => `${err.code ?? err.name}: ${err.message}${err.reusedSocket ? ' (reused socket)' : ''}${err.cut ? ' (response cut)' : ''}` +
    ` (attempts: ${err.history?.join(', ')}; ${err.bodySent ? 'request sent' : 'request not all sent'}; sent ${err.sinceSigterm} ms after the last SIGTERM)`

  async function loop (kind, client, once) {
    for (let n = 0; !phase.stopping; n++) {
      try {
        await once(n)
      } catch (err) {
        failure(kind, `client ${client} request ${n}: ${describe(err)}`)
      }
      await sleep(settings.pause)
    }
  }

  const plain = (client) => loop('plain', client, async (n) => {
    const json = n % 2 === 1
    const kind = json ? 'json' : 'text'
    const start = now()
    const res = await call(kind, { path: `/v2/${kind}` })
    const end = now()
    plainLatencies.push({ start, end, ms: end - start, retried: res.retried })
    const ok = res.status === 200 && (json ? JSON.parse(res.body).hello === 'world' : res.body.toString() === 'hello')
    if (!ok) failure(kind, `status ${res.status}, body ${res.body.toString().slice(0, 80)}`)
  })

  const download = (client) => loop('download', client, async () => {
    try {
      const res = await call('download', {
        path: '/v2/download',
        onResponse: (response) => { if (response.statusCode === 200) inflight.download.set(client, response.headers['x-worker']) }
      })
      if (res.status !== 200 || res.body.length !== DOWNLOAD_SIZE || sha256(res.body) !== DOWNLOAD_DIGEST) {
        failure('download', `status ${res.status}, ${res.body.length} bytes, a body that looked complete but is not the download`)
      }
    } finally {
      inflight.download.delete(client)
    }
  })

  const upload = (client) => loop('upload', client, async (n) => {
    const body = randomBytes(UPLOAD_SIZE)
    const id = (a) => `u${client}-${n}-${a}`
    let answeredBy = 0
    const res = await call('upload', (a) => ({
      method: 'POST',
      path: '/v2/upload',
      headers: { 'content-type': 'application/octet-stream', 'content-length': UPLOAD_SIZE, 'x-upload-id': id(a) },
      body,
      onResponse: () => { answeredBy = a }
    }), (a) => uploads.failed.push(id(a)))
    const answer = res.status === 200 ? JSON.parse(res.body) : {}
    if (answer.sha256 !== sha256(body) || answer.length !== UPLOAD_SIZE) failure('upload', `status ${res.status}, answer ${res.body.toString().slice(0, 120)}`)
    else uploads.answered.push(id(answeredBy))
  })

  const work = (client) => loop('work', client, async (n) => {
    const id = (a) => `w${client}-${n}-${a}`
    let answeredBy = 0
    const res = await call('work', (a) => { answeredBy = a; return { path: `/v2/work?id=${id(a)}` } })
    if (res.status !== 200 || res.body.toString() !== 'accepted') failure('work', `status ${res.status}, body ${res.body.toString().slice(0, 80)}`)
    else accepted.push(id(answeredBy))
  })

  // SSE clients: the eventsource package, which reconnects with
  // Last-Event-ID after the `retry:` the stream sent, as a browser does.
  const sseClients = []
  // Their own connection pool, closed at the end: Node 20's server.close()
  // waits for a connection that never carried a request (one an aborted
  // reconnection left in the pool) until the client closes it.
  const sseDispatcher = new FetchAgent()
  function sseClient (client) {
    const state = { client, ids: [], bad: [], connections: [], errors: [], source: null }
    let current = null
    state.source = new EventSource(`${origin}/v2/events`, {
      fetch: async (url, init) => {
        const connection = { lastEventId: init.headers['Last-Event-ID'] ?? null, idsBefore: state.ids.length, worker: null, status: null, events: 0 }
        state.connections.push(connection)
        current = connection
        const response = await fetch(url, { ...init, dispatcher: sseDispatcher })
        connection.status = response.status
        connection.worker = response.headers.get('x-worker')
        if (response.status === 200) inflight.sse.set(client, connection.worker)
        return response
      }
    })
    state.source.onmessage = (event) => {
      const id = Number(event.lastEventId)
      state.ids.push(id)
      if (current !== null) current.events++
      if (event.data !== eventData(id)) state.bad.push(id)
    }
    state.source.onerror = (event) => {
      inflight.sse.delete(client)
      // A stream the server ended cleanly has no message; a cut one has.
      state.errors.push({ message: event.message ?? null, code: event.code ?? null, readyState: state.source.readyState, stopping: phase.stopping })
    }
    sseClients.push(state)
  }

  // WebSocket clients: an echo, one message at a time; reconnect after a close.
  const wsClients = []
  function wsClient (client) {
    const state = { client, connections: [], refused: 0, stopped: null }
    const connect = () => {
      const connection = { worker: null, echoes: 0, unanswered: 0, close: null, error: null }
      state.connections.push(connection)
      const ws = new WebSocket(`${origin.replace('http', 'ws')}/v2/ws`)
      state.ws = ws
      let expected = null
      let seq = 0
      const send = () => {
        if (ws.readyState !== WebSocket.OPEN || phase.stopping) return
        expected = `c${client}-${seq++}`
        ws.send(expected)
      }
      ws.on('message', (data) => {
        const text = data.toString()
        if (connection.worker === null && text.startsWith('worker ')) {
          connection.worker = text.slice(7)
          inflight.ws.set(client, connection.worker)
          send()
          return
        }
        if (text !== expected) connection.error = `echo ${JSON.stringify(text)}, expected ${JSON.stringify(expected)}`
        else connection.echoes++
        expected = null
        setTimeout(send, WS_ECHO_PAUSE)
      })
      ws.on('unexpected-response', (_req, res) => {
        // An upgrade refused by a server that began closing: retried.
        connection.error = `upgrade answered ${res.statusCode}`
        if (res.statusCode === 503) { state.refused++; connection.error = null }
        res.resume()
        ws.terminate()
      })
      ws.on('error', (err) => { connection.error ??= `${err.code ?? err.name}: ${err.message}` })
      ws.on('close', (code) => {
        if (inflight.ws.get(client) === connection.worker) inflight.ws.delete(client)
        connection.close = { code, stopping: phase.stopping }
        if (expected !== null) connection.unanswered++
        if (phase.stopping) { state.stopped?.(); return }
        setTimeout(connect, WS_RECONNECT_DELAY)
      })
    }
    connect()
    wsClients.push(state)
  }

  const loops = []
  for (let i = 0; i < settings.plain; i++) loops.push(plain(i))
  for (let i = 0; i < settings.downloads; i++) loops.push(download(i))
  for (let i = 0; i < settings.uploads; i++) loops.push(upload(i))
  for (let i = 0; i < settings.work; i++) loops.push(work(i))
  for (let i = 0; i < settings.sse; i++) sseClient(i)
  for (let i = 0; i < settings.ws; i++) wsClient(i)

  await sleep(settings.before)

  // --- The rolling restart -------------------------------------------------
  const restarts = []
  const windows = []
  for (let round = 0; round < settings.rounds; round++) {
    for (let slot = 0; slot < slots.length; slot++) {
      const old = slots[slot]
      // The restart must prove something: wait until the worker has a
      // download, an SSE stream and a WebSocket open.
      // The SSE and WebSocket clients stay where they are; if the worker has
      // none of one kind, add a client of that kind now and then (the
      // primary deals each new connection to the next worker in turn).
      const waitStart = now()
      const added = { sse: 0, ws: 0 }
      while (now() - waitStart < settings.inflightTimeout && !(countOn('download', old.id) > 0 && countOn('sse', old.id) > 0 && countOn('ws', old.id) > 0)) {
        const waited = now() - waitStart
        if (countOn('sse', old.id) === 0 && waited > ADD_CLIENT_AFTER * (added.sse + 1)) { sseClient(sseClients.length); added.sse++ }
        if (countOn('ws', old.id) === 0 && waited > ADD_CLIENT_AFTER * (added.ws + 1)) { wsClient(wsClients.length); added.ws++ }
        await sleep(2)
      }
      const inflightAtSigterm = { download: countOn('download', old.id), sse: countOn('sse', old.id), ws: countOn('ws', old.id) }
      const sseOn = sseClients.filter((state) => inflight.sse.get(state.client) === old.id).map((state) => ({ state, ids: state.ids.length, connections: state.connections.length }))
      const wsOn = wsClients.filter((state) => inflight.ws.get(state.client) === old.id).map((state) => ({ state, connection: state.connections.at(-1) }))
      const sigtermAt = now()
      // A real SIGTERM, as a process manager sends: worker.kill() would
      // first disconnect the worker, which closes its servers behind Fastify.
      old.worker.process.kill('SIGTERM')
      lastSigterm = now()
      const replacement = fork()
      slots[slot] = replacement
      const [listeningAt, exit] = await Promise.all([replacement.listening, old.exited])
      const end = Math.max(listeningAt, exit.at)
      windows.push([sigtermAt, end])
      restarts.push({
        round,
        slot,
        old: old.id,
        replacement: replacement.id,
        exit: { code: exit.code, signal: exit.signal },
        exitMs: Math.round(exit.at - sigtermAt),
        listeningMs: Math.round(listeningAt - replacement.forkedAt),
        windowMs: Math.round(end - sigtermAt),
        inflightAtSigterm,
        clientsAdded: added,
        sseOn,
        wsOn
      })
      await sleep(settings.gap)
    }
  }

  await sleep(settings.after)

  // --- Stop ----------------------------------------------------------------
  phase.stopping = true
  await Promise.all(loops)
  for (const state of sseClients) state.source.close()
  await Promise.all(wsClients.map((state) => new Promise((resolve) => {
    if (state.ws.readyState === WebSocket.CLOSED) return resolve()
    state.stopped = resolve
    state.ws.close(1000)
  })))
  agent.destroy()
  freshAgent.destroy()
  await sseDispatcher.destroy()
  for (const entry of slots) entry.worker.process.kill('SIGTERM')
  const finalExits = await Promise.all(slots.map((entry) => entry.exited))
  clearTimeout(deadline)
  // Workers' last lines.
  await sleep(50)

  // --- Checks --------------------------------------------------------------
  const uploadsRead = new Set(readFileSync(uploadLog, 'utf8').split('\n').filter(Boolean))
  const workDone = new Set(readFileSync(workLog, 'utf8').split('\n').filter(Boolean))
  rmSync(dir, { recursive: true, force: true })

  const checks = []
  const check = (name, ok, detail) => checks.push({ name, ok: Boolean(ok), detail })

  check('restarts', restarts.length === settings.workers * settings.rounds, `${restarts.length} restarts of ${settings.workers} workers × ${settings.rounds} rounds`)
  const thin = restarts.filter((r) => !(r.inflightAtSigterm.download > 0 && r.inflightAtSigterm.sse > 0 && r.inflightAtSigterm.ws > 0))
  check('in flight at each SIGTERM', thin.length === 0, thin.length === 0
    ? 'a download, an SSE stream and a WebSocket were open on the worker at every SIGTERM'
    : `${thin.length} restarts without: ${thin.map((r) => `worker ${r.old} ${JSON.stringify(r.inflightAtSigterm)}`).join('; ')}`)
  const badExits = restarts.filter((r) => r.exit.code !== 0 || r.exit.signal !== null || r.exitMs >= settings.grace)
  check('workers exit 0 within the grace delay', badExits.length === 0 && finalExits.every((e) => e.code === 0), badExits.length === 0
    ? `slowest exit ${Math.max(...restarts.map((r) => r.exitMs))} ms after SIGTERM (grace ${settings.grace} ms)`
    : badExits.map((r) => `worker ${r.old}: code ${r.exit.code}, signal ${r.exit.signal}, ${r.exitMs} ms`).join('; '))
  check('nothing logged at error', logs.errors.length === 0 && logs.stderr.length === 0 && logs.other.length === 0,
    logs.errors.length + logs.stderr.length + logs.other.length === 0
      ? `${logs.lines} log lines, none at error; nothing on stderr`
      : [...logs.errors.slice(0, 5).map((record) => `worker ${record.worker}: ${record.msg} ${record.err?.message ?? ''}`), ...logs.stderr.slice(0, 5), ...logs.other.slice(0, 5)].join(' | '))
  const errorKinds = Object.entries(stats.errors)
  check('no client errors', errorKinds.length === 0, errorKinds.length === 0
    ? 'every response was complete and intact; only resets of reused sockets and 503s were retried'
    : errorKinds.map(([kind, { count, examples }]) => `${kind} ${count} (${examples[0]})`).join(' | '))

  const failedButRead = uploads.failed.filter((id) => uploadsRead.has(id))
  const answeredUnread = uploads.answered.filter((id) => !uploadsRead.has(id))
  check('uploads refused were never read', failedButRead.length === 0 && answeredUnread.length === 0 && uploads.answered.length > 0, failedButRead.length === 0
    ? `${uploads.failed.length} attempts refused or reset, none read by a server; ${uploads.answered.length} answered with their checksum (${answeredUnread.length} of them missing from the servers' log)`
    : `read by a server yet failed on the client: ${failedButRead.slice(0, 5).join(', ')}`)

  const missing = accepted.filter((id) => !workDone.has(id))
  check('every waitUntil job ran', missing.length === 0 && accepted.length > 0, `${accepted.length} accepted, ${missing.length} missing from the log${missing.length > 0 ? ': ' + missing.slice(0, 5).join(', ') : ''}`)

  // SSE: contiguous ids from 0, the right data, clean ends, resumption.
  const sseProblems = []
  for (const state of sseClients) {
    state.ids.forEach((id, i) => { if (id !== i) sseProblems.push(`client ${state.client}: event ${i} has id ${id}`) })
    if (state.bad.length > 0) sseProblems.push(`client ${state.client}: wrong data for ids ${state.bad.slice(0, 5).join(', ')}`)
    for (const [i, connection] of state.connections.entries()) {
      const expected = connection.idsBefore === 0 ? null : String(connection.idsBefore - 1)
      if (connection.lastEventId !== expected) sseProblems.push(`client ${state.client}: connection ${i} sent Last-Event-ID ${connection.lastEventId}, expected ${expected}`)
      if (connection.status !== 200 && connection.status !== null) sseProblems.push(`client ${state.client}: connection ${i} answered ${connection.status}`)
    }
    for (const error of state.errors) {
      if (error.stopping) continue
      if (error.message !== null || error.readyState !== 0) sseProblems.push(`client ${state.client}: ${error.message ?? 'failed'} (readyState ${error.readyState})`)
    }
  }
  for (const r of restarts) {
    for (const { state, ids, connections } of r.sseOn) {
      const resumed = state.connections.slice(connections).some((c) => c.worker !== r.old && c.events > 0) && state.ids.length > ids
      if (!resumed) sseProblems.push(`client ${state.client} did not resume after worker ${r.old} restarted`)
    }
  }
  const sseEvents = sseClients.reduce((sum, state) => sum + state.ids.length, 0)
  const sseReconnects = sseClients.reduce((sum, state) => sum + state.connections.length - 1, 0)
  check('SSE clients resume, no event lost or repeated', sseProblems.length === 0 && sseEvents > 0, sseProblems.length === 0
    ? `${sseEvents} events, ids contiguous per client, ${sseReconnects} reconnections with Last-Event-ID`
    : sseProblems.slice(0, 5).join(' | '))

  // WebSockets: those open on a restarted worker close with 1001 and the
  // client echoes again on its next connection; no other close or error.
  const wsProblems = []
  for (const r of restarts) {
    for (const { state, connection } of r.wsOn) {
      if (connection.close?.code !== 1001) wsProblems.push(`client ${state.client} on worker ${r.old}: closed with ${connection.close?.code}`)
      const later = state.connections.slice(state.connections.indexOf(connection) + 1)
      if (!later.some((c) => c.echoes > 0)) wsProblems.push(`client ${state.client} echoed nothing after worker ${r.old} restarted`)
    }
  }
  for (const state of wsClients) {
    for (const connection of state.connections) {
      if (connection.error !== null) wsProblems.push(`client ${state.client} on worker ${connection.worker}: ${connection.error}`)
      if (connection.close !== null && !connection.close.stopping && connection.close.code !== 1001 && connection.worker !== null) wsProblems.push(`client ${state.client}: closed with ${connection.close.code}`)
    }
  }
  const wsConnections = wsClients.reduce((sum, state) => sum + state.connections.length, 0)
  const wsEchoes = wsClients.reduce((sum, state) => sum + state.connections.reduce((s, c) => s + c.echoes, 0), 0)
  const wsUnanswered = wsClients.reduce((sum, state) => sum + state.connections.reduce((s, c) => s + c.unanswered, 0), 0)
  const wsRefused = wsClients.reduce((sum, state) => sum + state.refused, 0)
  const ws1001 = wsClients.reduce((sum, state) => sum + state.connections.filter((c) => c.close?.code === 1001).length, 0)
  check('WebSockets closed with 1001 and reconnect', wsProblems.length === 0 && wsEchoes > 0, wsProblems.length === 0
    ? `${ws1001} closed with 1001, ${wsConnections} connections, ${wsEchoes} echoes`
    : wsProblems.slice(0, 5).join(' | '))

  const inWindow = (l) => windows.some(([from, to]) => l.end >= from && l.start <= to)
  const during = plainLatencies.filter(inWindow)
  const outside = plainLatencies.filter((l) => !inWindow(l)).map((l) => l.ms)
  const total = (table) => Object.values(table).reduce((sum, n) => sum + n, 0)

  const report = {
    node: process.version,
    settings: { ...Object.fromEntries(Object.keys(defaults).map((key) => [key, settings[key]])), naiveClose: settings.naiveClose },
    durationMs: Math.round(now() - startedAt),
    latency: {
      during: summary(during.map((l) => l.ms)),
      outside: summary(outside),
      // During the restarts, the requests answered at their first attempt:
      // what the restart costs a request that needed no retry.
      duringFirstAttempt: summary(during.filter((l) => !l.retried).map((l) => l.ms))
    },
    retries: { total: total(stats.resets) + total(stats.refused), resets: stats.resets, refused: stats.refused, wsRefused },
    counts: {
      requests: stats.requests,
      uploadsRead: uploadsRead.size,
      uploadAttemptsFailed: uploads.failed.length,
      workAccepted: accepted.length,
      workDone: workDone.size,
      sseClients: sseClients.length,
      wsClients: wsClients.length,
      sseEvents,
      sseConnections: sseReconnects + sseClients.length,
      wsConnections,
      wsEchoes,
      wsClosed1001: ws1001,
      wsUnanswered
    },
    restarts: restarts.map(({ sseOn, wsOn, ...r }) => ({
      ...r,
      serverOpenAtClose: logs.closing.get(r.old)?.open ?? null,
      // From fastify.close() to its server.close(), after the preClose
      // hooks: the time it refuses kept-alive requests with 503.
      preCloseMs: logs.closeCalled.has(r.old) && logs.serverClose.has(r.old) ? logs.serverClose.get(r.old) - logs.closeCalled.get(r.old) : null
    })),
    logs: { lines: logs.lines, byLevel: logs.byLevel, errors: logs.errors.slice(0, 10), stderr: logs.stderr.slice(0, 10), other: logs.other.slice(0, 10) },
    clientErrors: stats.errors,
    checks,
    ok: checks.every((c) => c.ok)
  }
  return report
}

function print (report) {
  const { latency, retries, counts, settings } = report
  const line = (text = '') => process.stdout.write(text + '\n')
  line(`rolling restart, Node ${report.node}: ${settings.workers} workers, ${settings.rounds} rounds, ${report.restarts.length} restarts in ${(report.durationMs / 1000).toFixed(1)} s`)
  line(`clients: ${settings.plain} plain, ${settings.downloads} download, ${settings.uploads} upload, ${settings.work} waitUntil loops; ${counts.sseClients} SSE, ${counts.wsClients} WebSocket (${settings.sse} and ${settings.ws} at the start)`)
  line()
  line(`plain requests   during restarts: n ${latency.during.n}, p50 ${latency.during.p50} ms, p99 ${latency.during.p99} ms, max ${latency.during.max} ms`)
  line(`                 (first attempt:  n ${latency.duringFirstAttempt.n}, p50 ${latency.duringFirstAttempt.p50} ms, p99 ${latency.duringFirstAttempt.p99} ms, max ${latency.duringFirstAttempt.max} ms)`)
  line(`                 outside:         n ${latency.outside.n}, p50 ${latency.outside.p50} ms, p99 ${latency.outside.p99} ms, max ${latency.outside.max} ms`)
  line(`retries          ${retries.total}: resets of reused sockets ${JSON.stringify(retries.resets)}, 503 refusals ${JSON.stringify(retries.refused)}; WebSocket upgrades refused ${retries.wsRefused}`)
  line(`answered         ${Object.entries(counts.requests).map(([kind, n]) => `${kind} ${n}`).join(', ')}`)
  line(`SSE              ${counts.sseEvents} events over ${counts.sseConnections} connections`)
  line(`WebSocket        ${counts.wsEchoes} echoes over ${counts.wsConnections} connections, ${counts.wsClosed1001} closed with 1001, ${counts.wsUnanswered} messages unanswered at a close`)
  line()
  for (const r of report.restarts) {
    line(`restart ${r.round}.${r.slot}: worker ${r.old} -> ${r.replacement}, exit ${r.exit.code} after ${r.exitMs} ms (preClose ${r.preCloseMs} ms), replacement listening after ${r.listeningMs} ms; open at SIGTERM ${JSON.stringify(r.inflightAtSigterm)}`)
  }
  line()
  for (const c of report.checks) line(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`)
}

if (!cluster.isPrimary) throw new Error('rolling-restart.mjs is the primary; its workers run rolling-worker.mjs')
const report = await main().catch((err) => {
  for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL')
  process.stderr.write(`rolling-restart: ${err.stack}\n`)
  process.exit(1)
})
if (report.settings !== undefined && process.argv.includes('--json')) process.stdout.write(JSON.stringify(report) + '\n')
else print(report)
process.exitCode = report.ok ? 0 : 1
