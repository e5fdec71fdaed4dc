// The WebSocket load generator, in its own process (pinned to the other
// core): `ws` clients that keep connections open to each server and, when
// asked, run an echo loop on them for a window, open and close WebSockets
// in a loop, or check that a server echoes correctly.
import { WebSocket } from 'ws'
import { WS_PATH, wsCaseById, wsCases, wsMessage } from './ws-app.mjs'
import { serveParent } from './proc.mjs'

// No compression (the servers offer none either), and no UTF-8 validation
// of what comes back: the loop compares lengths, the check whole messages.
const CLIENT_OPTIONS = { perMessageDeflate: false, skipUTF8Validation: true }

/**
 * A case's message as the client's frame, built once: masked (as every
 * client frame must be, so that the servers unmask it as they would a
 * browser's) with a fixed mask. The echo loop writes it to the socket as it
 * is, so that the client's work per message stays small and it can keep
 * the server busy.
 */
function clientFrame ({ binary }, payload) {
  const length = payload.length
  if (length > 0xffff) throw new Error('a benchmark message must be under 64 KiB')
  const opcode = 0x80 | (binary ? 2 : 1) // FIN, text or binary
  const head = length < 126 ? Buffer.from([opcode, 0x80 | length]) : Buffer.from([opcode, 0x80 | 126, length >> 8, length & 0xff])
  const mask = Buffer.from([0x37, 0xfa, 0x21, 0x3d])
  const masked = Buffer.from(payload.map((byte, i) => byte ^ mask[i & 3]))
  return Buffer.concat([head, mask, masked])
}

/** The open connections to each server, by port. */
const pools = new Map()

function connect (port) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${WS_PATH}`, CLIENT_OPTIONS)
    ws.once('open', () => { ws.removeListener('error', reject); resolve(ws) })
    ws.once('error', reject)
    ws.once('unexpected-response', (request, response) => reject(new Error(`upgrade answered ${response.statusCode}`)))
  })
}

async function open ({ port, connections }) {
  await close({ port })
  const pool = []
  for (let i = 0; i < connections; i++) pool.push(await connect(port))
  for (const ws of pool) ws.on('error', () => {})
  pools.set(port, pool)
  return { connections: pool.length }
}

async function close ({ port }) {
  const pool = pools.get(port)
  pools.delete(port)
  if (pool === undefined) return {}
  await Promise.all(pool.map((ws) => new Promise((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) return resolve()
    ws.once('close', resolve)
    ws.close()
  })))
  return {}
}

/**
 * The echo loop: every connection keeps `depth` messages in flight, sending
 * the next as each echo comes back, until `duration` seconds have passed or
 * `amount` messages were sent (capped at `maxSeconds`); then it waits for
 * the echoes still in flight. A reply of the wrong length or frame type is
 * counted as a mismatch.
 */
function echo ({ port, caseId, duration, amount, maxSeconds, depth }) {
  const pool = pools.get(port)
  if (pool === undefined) throw new Error(`no connections open to ${port}`)
  const testCase = wsCaseById(caseId)
  const message = wsMessage(testCase)
  const frame = clientFrame(testCase, message)
  let running = true
  let sent = 0
  let received = 0
  let mismatches = 0
  let inFlight = 0
  const started = process.hrtime.bigint()
  return new Promise((resolve, reject) => {
    const limit = amount === undefined ? duration : maxSeconds
    const timer = setTimeout(() => { running = false; if (inFlight === 0) finish() }, limit * 1000)
    const cleanups = []
    function finish () {
      clearTimeout(timer)
      for (const cleanup of cleanups) cleanup()
      const seconds = Number(process.hrtime.bigint() - started) / 1e9
      resolve({ sent, received, mismatches, seconds, rate: received / seconds })
    }
    // The frames written in one tick go out in one write (the echoes of one
    // read come back together).
    const uncork = (socket) => { socket.uncork() }
    function send (ws) {
      sent++
      inFlight++
      if (amount !== undefined && sent >= amount) running = false
      const socket = ws._socket
      if (socket.writableCorked === 0) {
        socket.cork()
        process.nextTick(uncork, socket)
      }
      socket.write(frame)
    }
    for (const ws of pool) {
      const onMessage = (data, isBinary) => {
        received++
        inFlight--
        if (isBinary !== testCase.binary || data.length !== message.length) mismatches++
        if (running) send(ws)
        else if (inFlight === 0) finish()
      }
      const onClose = () => { reject(new Error(`a connection to ${port} closed during the echo loop`)) }
      ws.on('message', onMessage)
      ws.once('close', onClose)
      cleanups.push(() => { ws.removeListener('message', onMessage); ws.removeListener('close', onClose) })
    }
    for (const ws of pool) {
      for (let i = 0; i < depth && running; i++) send(ws)
    }
  })
}

/**
 * The connect loop: `concurrency` clients each open a WebSocket, close it
 * once open (a clean close handshake), and start over, for `duration`
 * seconds or until `amount` were started (capped at `maxSeconds`); then it
 * waits for those still open to close.
 */
function churn ({ port, duration, amount, maxSeconds, concurrency }) {
  let running = true
  let opened = 0
  let closed = 0
  let failed = 0
  let active = 0
  const began = process.hrtime.bigint()
  let started = 0
  return new Promise((resolve) => {
    const limit = amount === undefined ? duration : maxSeconds
    const timer = setTimeout(() => { running = false; if (active === 0) finish() }, limit * 1000)
    function finish () {
      clearTimeout(timer)
      const seconds = Number(process.hrtime.bigint() - began) / 1e9
      resolve({ opened, closed, failed, seconds, rate: closed / seconds })
    }
    function next () {
      if (!running) {
        if (active === 0) finish()
        return
      }
      active++
      if (amount !== undefined && ++started >= amount) running = false
      const ws = new WebSocket(`ws://127.0.0.1:${port}${WS_PATH}`, CLIENT_OPTIONS)
      let wasOpen = false
      ws.once('open', () => { wasOpen = true; opened++; ws.close(1000) })
      ws.on('error', () => {})
      ws.once('close', () => {
        active--
        if (wasOpen) closed++
        else failed++
        next()
      })
    }
    for (let i = 0; i < concurrency; i++) next()
  })
}

/** Sends `payload` on `ws` (through ws.send, or as the echo loop's prebuilt frame) and resolves with the next message. */
function roundTrip (ws, payload, binary, prebuilt) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no echo in 5 s')), 5000)
    ws.once('message', (data, isBinary) => { clearTimeout(timer); resolve({ data, isBinary }) })
    if (prebuilt) ws._socket.write(clientFrame({ binary }, payload))
    else ws.send(payload, { binary })
  })
}

/**
 * The correctness check, on a fresh connection: each case's message, sent
 * with ws.send() and as the echo loop's frame, plus an empty text message, multi-byte UTF-8 text and a binary message of every
 * byte value, must come back byte for byte in a frame of the same type.
 * Returns the differences found (none when the server echoes correctly).
 */
async function check ({ port }) {
  const notes = []
  const ws = await connect(port)
  const probes = [
    ...wsCases.map((c) => ({ id: c.id, payload: wsMessage(c), binary: c.binary })),
    ...wsCases.map((c) => ({ id: `${c.id} as the loop's frame`, payload: wsMessage(c), binary: c.binary, prebuilt: true })),
    { id: 'empty text', payload: Buffer.alloc(0), binary: false },
    { id: 'UTF-8 text', payload: Buffer.from('héllo wörld, 日本語, 🦊 '.repeat(20)), binary: false },
    { id: 'every byte', payload: Buffer.from(Array.from({ length: 256 }, (_, i) => i)), binary: true }
  ]
  for (const probe of probes) {
    const { data, isBinary } = await roundTrip(ws, probe.payload, probe.binary, probe.prebuilt)
    if (isBinary !== probe.binary) notes.push(`${probe.id}: came back as a ${isBinary ? 'binary' : 'text'} frame`)
    if (!Buffer.from(data).equals(probe.payload)) notes.push(`${probe.id}: came back as ${data.length} different bytes`)
  }
  await new Promise((resolve) => { ws.once('close', resolve); ws.close(1000) })
  return { notes }
}

serveParent(async (message) => {
  switch (message.type) {
    case 'open': return open(message)
    case 'close': return close(message)
    case 'echo': return echo(message)
    case 'churn': return churn(message)
    case 'check': return check(message)
    default: throw new Error(`unknown message ${message.type}`)
  }
}, 20 * 60_000)
