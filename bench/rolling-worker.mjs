// One worker of the rolling restart (rolling-restart.mjs forks it under
// node:cluster): a Fastify server with a Hono app mounted under /v2, run as
// deployed, under close-with-grace, which calls fastify.close() on SIGTERM.
// Fastify's logger writes JSON lines to stdout, which the primary reads.
//
// Environment: PORT, CLOSE_TIMEOUT and GRACE_DELAY (ms), UPLOAD_LOG (a file
// that gets the id of every upload whose body the app began to read),
// WORK_LOG (a file that gets the id of every waitUntil job that finished)
// and NAIVE_CLOSE.
import { createHash } from 'node:crypto'
import { appendFileSync } from 'node:fs'
import cluster from 'node:cluster'
import { Server } from 'node:net'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { stream, streamSSE } from 'hono/streaming'
import closeWithGrace from 'close-with-grace'
import fastifyHono from 'fastify-hono'
import { upgradeWebSocket } from 'fastify-hono/ws'
import { WebSocketServer } from 'ws'
import { downloadChunk, DOWNLOAD_CHUNKS, DOWNLOAD_PAUSE, eventData, SSE_INTERVAL, SSE_RETRY } from './rolling-shared.mjs'

const worker = String(cluster.worker?.id ?? process.pid)
const closeTimeout = Number(process.env.CLOSE_TIMEOUT ?? 5000)
const graceDelay = Number(process.env.GRACE_DELAY ?? 10000)
const uploadLog = process.env.UPLOAD_LOG
const workLog = process.env.WORK_LOG
// NAIVE_CLOSE=1: close-with-grace calling fastify.close() and nothing else,
// to see what the two steps around it (below) are for.
const naiveClose = process.env.NAIVE_CLOSE === '1'
/** Ms between the server's last accepted connection and fastify.close(). */
const ACCEPT_SETTLE = 50
if (uploadLog === undefined || workLog === undefined) throw new Error('UPLOAD_LOG and WORK_LOG must name files')

// What is in flight now, logged when the close begins: the primary checks
// that each restart happened with streams, WebSockets and jobs open.
const open = { download: 0, sse: 0, ws: 0, upload: 0, work: 0 }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const app = new Hono()
app.use(async (c, next) => {
  await next()
  c.header('x-worker', worker)
})
app.get('/text', (c) => c.text('hello'))
app.get('/json', (c) => c.json({ hello: 'world', worker }))

// 1 MiB in 64 KiB chunks a few ms apart: long enough to be in flight at close.
app.get('/download', (c) => stream(c, async (s) => {
  open.download++
  try {
    for (let i = 0; i < DOWNLOAD_CHUNKS && !s.aborted; i++) {
      await s.write(downloadChunk(i))
      await s.sleep(DOWNLOAD_PAUSE)
    }
  } finally {
    open.download--
  }
}))

app.post('/upload', async (c) => {
  // Recorded before the first byte is read: an upload that failed on the
  // client must not be here.
  appendFileSync(uploadLog, c.req.header('x-upload-id') + '\n')
  open.upload++
  try {
    const body = new Uint8Array(await c.req.arrayBuffer())
    return c.json({ sha256: createHash('sha256').update(body).digest('hex'), length: body.length })
  } finally {
    open.upload--
  }
})

// Events from a shared log: event n is the same on every worker, so a client
// resumes after its Last-Event-ID wherever it reconnects.
app.get('/events', (c) => {
  const last = c.req.header('last-event-id')
  let next = last === undefined || last === '' ? 0 : Number(last) + 1
  return streamSSE(c, async (s) => {
    open.sse++
    try {
      await s.writeSSE({ id: String(next), data: eventData(next), retry: SSE_RETRY })
      next++
      while (!s.aborted) {
        await s.sleep(SSE_INTERVAL)
        if (s.aborted) break
        await s.writeSSE({ id: String(next), data: eventData(next) })
        next++
      }
    } finally {
      open.sse--
    }
  })
})

app.get('/ws', upgradeWebSocket(() => ({
  onOpen (_event, ws) {
    open.ws++
    ws.send(`worker ${worker}`)
  },
  onMessage (event, ws) { ws.send(String(event.data)) },
  onClose () { open.ws-- }
})))

// Answers at once; the job finishes after the response, within waitUntil.
app.get('/work', (c) => {
  const id = c.req.query('id')
  let run
  c.executionCtx.waitUntil(new Promise((resolve) => { run = resolve }))
  open.work++
  run(sleep(50 + Math.floor(Math.random() * 50)).then(() => {
    appendFileSync(workLog, id + '\n')
    open.work--
  }))
  return c.text('accepted')
})

const fastify = Fastify({ logger: { base: { worker } } })
await fastify.register(fastifyHono, {
  app,
  prefix: '/v2',
  closeTimeout,
  websocket: { server: new WebSocketServer({ noServer: true }) }
})

// When Fastify closes the server, after the preClose hooks: until then it
// answers 503 to requests on kept-alive connections, and the idle ones stay
// open. A preClose hook of this file's would run before the mount's, whose
// hooks sit in a child context, so the call itself is what gets logged.
const closeServer = fastify.server.close
fastify.server.close = function (...args) {
  fastify.log.info({ event: 'server.close' }, 'server.close()')
  return closeServer.apply(this, args)
}

closeWithGrace({ delay: graceDelay, logger: fastify.log }, async ({ signal, err }) => {
  if (err !== undefined) fastify.log.error({ err }, 'closing after an error')
  fastify.log.info({ signal, open: { ...open }, event: 'closing' }, 'closing')
  if (!naiveClose) await stopAccepting(fastify.server)
  fastify.log.info({ event: 'fastify.close' }, 'fastify.close()')
  await fastify.close()
  fastify.log.info({ open: { ...open }, event: 'closed' }, 'closed')
  if (!naiveClose) await leaveCluster()
})

/**
 * Stops taking connections, then lets those already taken deliver their
 * request, before fastify.close(). Node's http server.close() closes the
 * idle connections at once, and from Node 26 that includes a connection
 * accepted whose request has not been read yet: its client, which sent the
 * request on a fresh connection, sees a reset it cannot safely retry. Under
 * node:cluster connections keep coming until the server closes (Fastify
 * closes it after its preClose hooks), so one can be that fresh. net.Server's
 * own close() stops listening (the primary hands new connections to the
 * other workers) and leaves the connections alone; Fastify's close() later
 * finds the server closed and goes on.
 */
async function stopAccepting (server) {
  Server.prototype.close.call(server)
  await sleep(ACCEPT_SETTLE)
}

/**
 * Waits until the primary knows this worker stopped listening, before
 * close-with-grace exits. The primary hands each connection to a worker
 * over IPC and forgets it until the worker answers; a worker that stopped
 * listening answers "not accepted" and the primary hands it to another. A
 * worker that exits with such a connection still unread in its IPC channel
 * never answers, and the primary keeps the connection open, unserved, for
 * good: its client hangs. cluster.worker.disconnect() waits for the
 * primary's acknowledgement, which comes after every connection the primary
 * sent before it.
 */
async function leaveCluster () {
  if (!cluster.isWorker || !process.connected) return
  await new Promise((resolve) => {
    process.once('disconnect', resolve)
    cluster.worker.disconnect()
  })
}

await fastify.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
