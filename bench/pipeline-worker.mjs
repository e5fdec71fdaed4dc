// One variant's in-process pipeline benchmark: `node bench/pipeline-worker.mjs <variant>`.
// Drives the server's request handler over a fake socket that drops what is
// written, with many requests pipelined: dispatch, response creation and
// Node's header serialization, without socket I/O.
import { Duplex } from 'node:stream'
import { caseById } from './cases.mjs'
import { serveParent } from './proc.mjs'
import { loadVariant } from './variants.mjs'

const BATCH = 32 // requests per chunk pushed into the socket
const MAX_IN_FLIGHT = 256 // bounds the memory held by unanswered requests

const createServer = await loadVariant(process.argv[2])
const server = await createServer()

function requestBytes (testCase) {
  const head = `${testCase.method} ${testCase.path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: bench\r\nAccept: */*\r\n`
  return Buffer.from(head + '\r\n')
}

/** Sends `total` pipelined requests (a multiple of BATCH) and waits for every response. */
function drive (request, total) {
  const batch = Buffer.concat(Array.from({ length: BATCH }, () => request))
  return new Promise((resolve, reject) => {
    let sent = 0
    let finished = 0
    let failed = 0
    let wanted = false
    let scheduled = false
    const socket = new Duplex({
      read () { wanted = true; pump() },
      write (chunk, encoding, callback) { callback() },
      writev (chunks, callback) { callback() }
    })
    function pump () {
      scheduled = false
      while (wanted && sent < total && sent - finished <= MAX_IN_FLIGHT - BATCH) {
        sent += BATCH
        wanted = socket.push(batch)
      }
    }
    function onFinish () {
      if (this.statusCode !== 200) failed++
      if (++finished === total) {
        server.off('request', onRequest)
        socket.destroy()
        resolve({ failed })
      } else if (!scheduled) {
        // Not from inside the response's own finish: no re-entrant parsing.
        scheduled = true
        setImmediate(pump)
      }
    }
    function onRequest (req, res) { res.once('finish', onFinish) }
    server.on('request', onRequest)
    // A client address, as a TCP socket has: @fastify/rate-limit (the stack
    // variants) keys its count on request.ip and answers 500 without one.
    Object.defineProperty(socket, 'remoteAddress', { value: '127.0.0.1' })
    socket.on('error', reject)
    server.emit('connection', socket)
  })
}

async function measure (testCase, requests) {
  const bytes = requestBytes(testCase)
  const cpuBefore = process.cpuUsage()
  const started = process.hrtime.bigint()
  const { failed } = await drive(bytes, requests)
  const wall = Number(process.hrtime.bigint() - started)
  const cpu = process.cpuUsage(cpuBefore)
  return { cpuNs: (cpu.user + cpu.system) * 1000 / requests, wallNs: wall / requests, failed }
}

serveParent(async (message) => {
  if (message.type !== 'run') throw new Error(`unknown message ${message.type}`)
  const { cases, requests, warmup, reps } = message
  const roundUp = (n) => Math.max(BATCH, Math.ceil(n / BATCH) * BATCH)
  const testCases = cases.map(caseById)
  for (const testCase of testCases) await drive(requestBytes(testCase), roundUp(warmup))
  const samples = Object.fromEntries(cases.map((id) => [id, []]))
  // The cases alternate, rep by rep, so a disturbance hits both alike.
  for (let rep = 0; rep < reps; rep++) {
    for (const testCase of testCases) samples[testCase.id].push(await measure(testCase, roundUp(requests)))
  }
  // The best rep: interference from other processes only ever adds time.
  // CPU time rather than wall time: it leaves out time spent descheduled.
  const results = {}
  for (const [id, reps] of Object.entries(samples)) {
    results[id] = {
      nsPerRequest: Math.min(...reps.map((r) => r.cpuNs)),
      wallNsPerRequest: Math.min(...reps.map((r) => r.wallNs)),
      reps: reps.map((r) => Math.round(r.cpuNs)),
      requests: roundUp(requests),
      failed: reps.reduce((sum, r) => sum + r.failed, 0)
    }
  }
  return { results }
}, 10 * 60_000)
