// The shutdown as deployed: the mount in a child process under
// close-with-grace, with an SSE stream, a WebSocket and a slow request in
// flight, gets a real SIGTERM. The slow request completes, the stream and
// the WebSocket end, and the process exits 0 well within the grace delay.
import { test } from 'tap'
import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import WebSocket from 'ws'
import { parseResponses } from './helpers/net'
import { lacks } from './helpers/optional'

const GRACE_DELAY = 5000

test('SIGTERM under close-with-grace: the slow request completes, the SSE stream and the WebSocket end, exit 0 within the grace delay', { skip: lacks('close-with-grace') || lacks('hono/ws', 'defineWebSocketHelper') }, async (t) => {
  const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'shutdown-under-grace.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, GRACE_DELAY: String(GRACE_DELAY) }
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const events: Array<Record<string, unknown>> = []
  const waiters: Array<() => void> = []
  createInterface({ input: child.stdout }).on('line', (line) => {
    events.push(JSON.parse(line))
    for (const wake of waiters.splice(0)) wake()
  })
  const seen = async (predicate: (event: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
    for (;;) {
      const found = events.find(predicate)
      if (found !== undefined) return found
      await new Promise<void>((resolve) => waiters.push(resolve))
    }
  }
  const exited = new Promise<{ code: number | null, signal: string | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
  })
  const { port } = await seen((event) => event.port !== undefined) as { port: number }

  // An SSE stream, read over a raw socket to see its framing.
  let sse = ''
  const sseSocket = connect(port, '127.0.0.1', () => { sseSocket.write('GET /v2/sse HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n') })
  sseSocket.on('data', (chunk) => { sse += chunk.toString('latin1') })
  const sseEnded = new Promise<void>((resolve, reject) => { sseSocket.on('end', () => resolve()); sseSocket.on('error', reject) })
  await new Promise<void>((resolve) => sseSocket.once('data', () => resolve()))

  // A WebSocket.
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v2/ws`)
  await new Promise<void>((resolve, reject) => { ws.once('message', () => resolve()); ws.once('error', reject) })
  const wsClosed = new Promise<number>((resolve) => { ws.once('close', (code) => resolve(code)) })

  // A slow request, in flight when the signal comes.
  const slow = fetch(`http://127.0.0.1:${port}/v2/slow`).then(async (response) => [response.status, await response.text()])
  await seen((event) => event.event === 'slow started')

  const signalled = Date.now()
  child.kill('SIGTERM')

  t.same(await slow, [200, 'slow done'], 'the slow request completed')
  await sseEnded
  const [response] = parseResponses(sse, ['GET'])
  t.equal(response.status, 200)
  t.equal(response.framing, 'chunked', 'the SSE body ended with its terminator')
  t.match(response.body, /^data: 0\n\n/)
  t.equal(await wsClosed, 1001, 'the WebSocket was closed with 1001')
  const exit = await exited
  const took = Date.now() - signalled
  t.same(exit, { code: 0, signal: null }, 'the process exited 0')
  t.ok(took < GRACE_DELAY, `within the grace delay (${took} ms)`)
  t.ok(events.some((event) => event.event === 'sse aborted'), 'the stream\'s onAbort ran')
  t.ok(events.some((event) => event.event === 'ws closed' && event.code === 1001), 'the WebSocket\'s onClose ran')
  t.ok(events.some((event) => event.event === 'closed'), 'fastify.close() resolved')
})
