import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen, rawRequest } from './helpers/net'

// A process of its own: with overrideGlobalObjects: false nothing may install the lightweight classes.
test('overrideGlobalObjects: false keeps the native classes, and everything still works', async (t) => {
  const NativeResponse = globalThis.Response
  const NativeRequest = globalThis.Request
  const NativeHeaders = globalThis.Headers
  const app = new Hono()
  app.get('/text', (c) => c.text('native'))
  app.get('/json', (c) => c.json({ native: true }))
  app.post('/echo', async (c) => c.text(await new Request(c.req.raw).text()))
  app.get('/kinds', (c) => c.json({ request: c.req.raw.constructor === NativeRequest, response: new Response('') instanceof NativeResponse }))
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/n', overrideGlobalObjects: false })
  t.teardown(() => server.close())
  t.equal(globalThis.Response, NativeResponse)
  t.equal(globalThis.Request, NativeRequest)
  t.equal(globalThis.Headers, NativeHeaders)
  const { port, base } = await listen(server)
  const text = await rawRequest(port, 'GET', '/n/text')
  t.equal(text.body, 'native')
  t.same(text.headers['content-length'], ['6'], 'buffered native bodies still get their length')
  t.same(JSON.parse((await rawRequest(port, 'GET', '/n/json')).body), { native: true })
  t.equal(await (await fetch(base + '/n/echo', { method: 'POST', body: 'round trip' })).text(), 'round trip')
  t.same(await (await fetch(base + '/n/kinds')).json(), { request: true, response: true })
})
