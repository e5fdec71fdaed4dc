import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'

const NativeResponse = globalThis.Response
const NativeRequest = globalThis.Request

test('registering installs the lightweight classes; instanceof holds for both kinds', async (t) => {
  const server = Fastify()
  await server.register(fastifyHono, { app: new Hono() })
  t.teardown(() => server.close())
  t.not(globalThis.Response, NativeResponse, 'Response is replaced')
  t.not(globalThis.Request, NativeRequest, 'Request is replaced')
  const light = new Response('x')
  t.ok(light instanceof Response)
  t.ok(light instanceof NativeResponse, 'a lightweight response is a native Response too')
  t.ok(new NativeResponse('x') instanceof Response, 'a native response is a Response')
  t.equal(Object.prototype.toString.call(light), '[object Response]')
  t.ok(Response.json({ a: 1 }) instanceof Response)
  t.equal(Response.redirect('http://x.example/', 302).headers.get('location'), 'http://x.example/')
  t.equal(Response.error().type, 'error')
  t.same(await Response.json({ a: 1 }).json(), { a: 1 })
})

test('a lightweight Response answers exactly as a native one', async (t) => {
  const server = Fastify()
  await server.register(fastifyHono, { app: new Hono() })
  t.teardown(() => server.close())
  const cases: Array<[string, () => [BodyInit | null | undefined, ResponseInit | undefined]]> = [
    ['string', () => ['héllo', undefined]],
    ['string with record', () => ['{"a":1}', { status: 201, headers: { 'content-type': 'application/json', 'x-a': '1' } }]],
    ['bytes', () => [new Uint8Array([1, 2, 3]), { headers: [['x-b', '2']] }]],
    ['null', () => [null, { status: 204 }]],
    ['undefined', () => [undefined, undefined]],
    ['Headers init', () => ['h', { headers: new Headers({ 'x-c': '3' }) }]]
  ]
  for (const [name, make] of cases) {
    const [body, init] = make()
    const light = new Response(body, init)
    const [body2, init2] = make()
    const native = new NativeResponse(body2, init2)
    t.equal(light.status, native.status, `${name} status`)
    t.equal(light.ok, native.ok, `${name} ok`)
    t.equal(light.statusText, native.statusText, `${name} statusText`)
    t.equal(light.type, native.type, `${name} type`)
    t.equal(light.bodyUsed, false, `${name} bodyUsed before`)
    const lightHeaders = [...light.headers].filter(([k]) => k !== 'content-type')
    const nativeHeaders = [...native.headers].filter(([k]) => k !== 'content-type')
    t.same(lightHeaders, nativeHeaders, `${name} headers`)
    t.equal(light.body === null, native.body === null, `${name} body null-ness`)
    const clone = light.clone()
    t.equal(await clone.text(), await native.clone().text(), `${name} clone text`)
    t.same(new Uint8Array(await light.arrayBuffer()), new Uint8Array(await native.arrayBuffer()), `${name} bytes`)
    t.equal(light.bodyUsed, native.bodyUsed, `${name} bodyUsed after`)
    if (light.bodyUsed) await t.rejects(light.text(), TypeError, `${name} second read fails`)
  }
  t.equal(new Response('x').headers.get('content-type'), 'text/plain; charset=UTF-8', 'the default text type')
  t.throws(() => new Response('x', { status: 99 }), RangeError, 'an invalid status throws as natively')
  t.throws(() => new Response('x', { status: 204 }), TypeError, 'a body with 204 throws as natively')
  const record = { 'x-r': '1' }
  const fromRecord = new Response('r', { headers: record })
  fromRecord.headers.set('x-r', '2')
  t.same(record, { 'x-r': '1' }, "changing a response's headers never touches the handler's record")
  const h = new Headers({ 'x-h': '1' })
  const fromHeaders = new Response('h', { headers: h })
  h.set('x-h', '2')
  t.equal(fromHeaders.headers, h, 'a Headers object in a plain init is kept, as @hono/node-server keeps it (docs/web-classes.md)')
  t.equal(fromHeaders.headers.get('x-h'), '2', 'so later changes to it are the response\'s')
  t.equal(h.get('content-type'), null, 'and it is not given the default type')
  const source = new Response('s', { headers: { 'x-s': '1' } })
  const fromResponse = new Response('c', source)
  t.not(fromResponse.headers, source.headers, 'a Response used as init has its headers copied, as natively')
  fromResponse.headers.set('x-s', '2')
  t.equal(source.headers.get('x-s'), '1')
})

test('the lightweight Request: reads, copies and native fallbacks', async (t) => {
  const seen: Record<string, unknown> = {}
  const app = new Hono()
  app.post('/copy', async (c) => {
    seen.isRequest = c.req.raw instanceof Request
    const copy = new Request(c.req.raw, { headers: { 'x-copied': '1' } })
    seen.copyIsNative = copy instanceof NativeRequest
    seen.copyHeader = copy.headers.get('x-copied')
    seen.copyUrl = copy.url
    seen.copyMethod = copy.method
    return c.text(await copy.text())
  })
  app.post('/twice', async (c) => {
    const first = await c.req.raw.text()
    let second: string
    try { await c.req.raw.text(); second = 'read again' } catch (err) { second = (err as Error).name }
    return c.json({ first, second, bodyUsed: c.req.raw.bodyUsed })
  })
  app.post('/bom', async (c) => c.json(await c.req.json()))
  app.post('/clone', async (c) => {
    const clone = c.req.raw.clone()
    return c.json({ a: await clone.text(), b: await c.req.raw.text() })
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/r' })
  t.teardown(() => server.close())
  const { base } = await listen(server)

  const copied = await fetch(base + '/r/copy', { method: 'POST', body: 'payload' })
  t.equal(await copied.text(), 'payload')
  t.same(seen, { isRequest: true, copyIsNative: true, copyHeader: '1', copyUrl: base + '/copy', copyMethod: 'POST' })

  const twice = await fetch(base + '/r/twice', { method: 'POST', body: 'once' })
  t.same(await twice.json(), { first: 'once', second: 'TypeError', bodyUsed: true })

  const bom = await fetch(base + '/r/bom', { method: 'POST', body: '\ufeff{"bom":true}', headers: { 'content-type': 'application/json' } })
  t.same(await bom.json(), { bom: true }, 'a UTF-8 BOM is stripped as Request.text() does')

  const clone = await fetch(base + '/r/clone', { method: 'POST', body: 'cloned' })
  t.same(await clone.json(), { a: 'cloned', b: 'cloned' })
})
