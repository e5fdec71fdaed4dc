// Behaviours @hono/node-server 2.1.5 to 2.1.9 changed for apps that the
// differential suite cannot drive: here over real node:http2 sockets.
import { test } from 'tap'
import { connect as connectHttp2, constants } from 'node:http2'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'

test('an HTTP/2 request the client cancels aborts c.req.raw.signal (node-server 2.1.5)', async (t) => {
  let aborted!: (value: string) => void
  const seen = new Promise<string>((resolve) => { aborted = resolve })
  let entered!: () => void
  const inApp = new Promise<void>((resolve) => { entered = resolve })
  const app = new Hono()
  app.post('/wait', async (c) => {
    const signal = c.req.raw.signal
    signal.addEventListener('abort', () => aborted('aborted'))
    entered()
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => { aborted('not aborted'); resolve() }, 3000)
      signal.addEventListener('abort', () => { clearTimeout(timer); resolve() })
    })
    return c.text('late')
  })
  const server = Fastify({ http2: true })
  await server.register(fastifyHono, { app })
  t.teardown(() => server.close())
  const { base } = await listen(server)
  const client = connectHttp2(base)
  t.teardown(() => client.destroy())
  const stream = client.request({ ':method': 'POST', ':path': '/wait', 'content-type': 'text/plain' })
  stream.on('error', () => {})
  stream.write('part of a body')
  await inApp
  stream.close(constants.NGHTTP2_CANCEL)
  t.equal(await seen, 'aborted')
})
