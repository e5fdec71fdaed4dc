import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { streamText } from 'hono/streaming'
import fastifyHono from 'fastify-hono'
import { http2Request } from './helpers/net'

test('HTTP/2: buffered and streamed bodies, headers, HEAD and request bodies', async (t) => {
  const app = new Hono()
  app.get('/text', (c) => { c.header('set-cookie', 'a=1', { append: true }); c.header('set-cookie', 'b=2', { append: true }); return c.text('over h2') })
  app.get('/json', (c) => c.json({ h2: true, url: c.req.url }))
  app.get('/stream', (c) => streamText(c, async (stream) => { await stream.write('one '); await stream.write('two') }))
  app.get('/hop', () => new Response('hop', { headers: { connection: 'keep-alive', 'keep-alive': 'timeout=5', 'transfer-encoding': 'chunked' } }))
  app.post('/echo', async (c) => c.text(await c.req.text()))
  const server = Fastify({ http2: true })
  await server.register(fastifyHono, { app, prefix: '/v2' })
  t.teardown(() => server.close())
  await server.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.server.address() as { port: number }).port
  const base = `http://127.0.0.1:${port}`

  const text = await http2Request(base, '/v2/text')
  t.equal(text.headers[':status'], 200)
  t.equal(text.body.toString(), 'over h2')
  t.equal(text.headers['content-length'], '7')
  t.same(text.headers['set-cookie'], ['a=1', 'b=2'])

  const json = await http2Request(base, '/v2/json')
  t.same(JSON.parse(json.body.toString()), { h2: true, url: `http://127.0.0.1:${port}/json` }, 'the URL comes from :authority')

  const stream = await http2Request(base, '/v2/stream')
  t.equal(stream.body.toString(), 'one two')

  const hop = await http2Request(base, '/v2/hop')
  t.equal(hop.headers[':status'], 200, 'connection-specific headers are dropped rather than crash HTTP/2')
  t.equal(hop.body.toString(), 'hop')
  t.equal(hop.headers.connection, undefined)

  const head = await http2Request(base, '/v2/text', { method: 'HEAD' })
  t.equal(head.headers[':status'], 200)
  t.equal(head.body.length, 0)

  const echo = await http2Request(base, '/v2/echo', { method: 'POST', body: 'h2 body' })
  t.equal(echo.headers[':status'], 200)
  t.equal(echo.body.toString(), 'h2 body')
})
