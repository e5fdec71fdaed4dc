import { test } from 'tap'
import { ServerResponse } from 'node:http'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { cors } from 'hono/cors'
import fastifyHono from 'fastify-hono'
import { listen, rawRequest } from './helpers/net'

const NativeResponse = globalThis.Response
const copyHeaders = Symbol.for('hono.response.copyHeaders')

// Which requests went out with Node's preset length (the fast path), by URL.
const preset = new Map<string, unknown>()
const originalWriteHead = ServerResponse.prototype.writeHead
ServerResponse.prototype.writeHead = function (this: ServerResponse & { _contentLength: unknown, req: { url: string, method: string } }, ...args: unknown[]) {
  preset.set(this.req.method + ' ' + this.req.url, this._contentLength)
  return (originalWriteHead as (...a: unknown[]) => ServerResponse).apply(this, args)
} as typeof ServerResponse.prototype.writeHead

async function server (t: Tap.Test): Promise<number> {
  const app = new Hono()
  app.use('/after/*', async (c, next) => { await next(); c.header('x-after', '1'); c.header('x-after-2', '2') })
  app.use('/reassign/*', async (c, next) => { await next(); c.res = new Response(c.res.body, c.res); c.res.headers.set('x-reassigned', '1') })
  app.use('/cors/*', cors({ origin: '*' }))
  app.use('/both/*', cors({ origin: '*' }), async (c, next) => { await next(); c.header('x-after', '1') })
  for (const prefix of ['/plain', '/after', '/reassign', '/cors', '/both']) {
    app.get(prefix + '/text', (c) => c.text('Hello, World!'))
    app.get(prefix + '/json', (c) => c.json({ ok: true }))
  }
  let saved: Response | undefined
  app.get('/saved', () => (saved ??= new Response('only once')))
  app.get('/chain', () => {
    let res = new Response('chained body')
    for (let i = 0; i < 70; i++) res = new Response(res.body, res)
    return res
  })
  const fastify = Fastify()
  await fastify.register(fastifyHono, { app, prefix: '/v2' })
  t.teardown(() => fastify.close())
  return (await listen(fastify)).port
}

test('every copy form keeps the fast path, and the copy carries the right headers', async (t) => {
  const port = await server(t)
  const cases: Array<[string, Record<string, string>]> = [
    ['/v2/plain/text', {}],
    ['/v2/after/text', { 'x-after': '1', 'x-after-2': '2' }],
    ['/v2/after/json', { 'x-after': '1' }],
    ['/v2/reassign/text', { 'x-reassigned': '1' }],
    ['/v2/cors/text', { 'access-control-allow-origin': '*' }],
    ['/v2/cors/json', { 'access-control-allow-origin': '*' }],
    ['/v2/both/text', { 'access-control-allow-origin': '*', 'x-after': '1' }]
  ]
  for (const [path, expected] of cases) {
    const res = await rawRequest(port, 'GET', path, { headers: { origin: 'https://a.example' } })
    t.equal(res.status, 200, path)
    t.equal(res.body, path.endsWith('json') ? '{"ok":true}' : 'Hello, World!', `${path} body`)
    for (const [name, value] of Object.entries(expected)) t.same(res.headers[name], [value], `${path} ${name}`)
    t.equal(preset.get('GET ' + path), Buffer.byteLength(res.body), `${path}: fast path (length preset)`)
    if (path.endsWith('text')) t.same(res.headers['content-type'], ['text/plain; charset=UTF-8'], `${path} default type`)
  }
})

test('HEAD carries the Content-Length the GET would have, and no body', async (t) => {
  const port = await server(t)
  for (const path of ['/v2/plain/text', '/v2/after/json', '/v2/both/text']) {
    const get = await rawRequest(port, 'GET', path)
    const head = await rawRequest(port, 'HEAD', path)
    t.same(head.headers['content-length'], get.headers['content-length'], `${path}: HEAD length`)
    t.same(head.headers['content-type'], get.headers['content-type'], `${path}: HEAD type`)
    t.equal(head.body, '')
  }
})

test('a body is never sent twice, and never lost', async (t) => {
  const port = await server(t)
  const first = await rawRequest(port, 'GET', '/v2/saved')
  t.equal(first.body, 'only once')
  const second = await rawRequest(port, 'GET', '/v2/saved')
  t.equal(second.status, 500, 'sending the same response again fails, as with a native body')
  t.match(JSON.parse(second.body), { code: 'FST_ERR_REP_RESPONSE_BODY_CONSUMED' })
  const chain = await rawRequest(port, 'GET', '/v2/chain')
  t.equal(chain.body, 'chained body', 'past 64 copies the native path takes over, body intact')
  t.same(chain.headers['content-length'], ['12'])
})

// The same program, run on the lightweight and on the native class, must observe the same things.
async function aliasProgram (R: typeof Response): Promise<unknown[]> {
  const out: unknown[] = []
  const attempt = async (fn: () => Promise<unknown>): Promise<unknown> => { try { return await fn() } catch (err) { return (err as Error).name } }

  const a = new R('héllo', { headers: { 'x-a': '1' } })
  const b = new R(a.body, a)
  out.push(a.bodyUsed, b.bodyUsed, b.status, b.headers.get('x-a'))
  b.headers.set('x-b', '2')
  out.push(a.headers.get('x-b'), b.headers.get('x-b'))
  out.push(await b.text(), a.bodyUsed, b.bodyUsed, await attempt(() => a.text()), await attempt(() => b.text()))

  const c = new R('stream me')
  const stream = c.body!
  const d = new R(stream, { status: 201, headers: c.headers })
  out.push(d.status, stream.locked)
  const reader = stream.getReader()
  out.push(c.bodyUsed, d.bodyUsed, stream.locked)
  const chunk = await reader.read()
  out.push(new TextDecoder().decode(chunk.value), c.bodyUsed, d.bodyUsed)
  reader.releaseLock()
  out.push(await attempt(() => d.text()))

  const e = new R('clone me')
  const f = new R(e.body, e)
  const g = f.clone()
  out.push(await g.text(), f.bodyUsed, e.bodyUsed, await f.text(), e.bodyUsed)

  const h = new R(null, new R('for head', { status: 202 }))
  out.push(h.status, h.body, h.headers.get('content-type') !== null)
  const i = new R(new R('').body, { status: 200 })
  out.push(await i.text(), i.bodyUsed)
  return out
}

test('alias and consumption rules match native Response', async (t) => {
  await server(t) // installs the lightweight globals
  t.not(Response, NativeResponse)
  const light = await aliasProgram(Response)
  const native = await aliasProgram(NativeResponse)
  t.same(light, native)
})

test('the copy hook returns a sharing copy, or declines', async (t) => {
  await server(t)
  const hook = (Response as unknown as Record<symbol, (r: unknown) => Response | undefined>)[copyHeaders]
  t.type(hook, 'function')
  const original = new Response('hooked', { status: 201, headers: { 'x-o': '1' } })
  const copy = hook(original)!
  t.ok(copy instanceof Response)
  t.equal(copy.status, 201)
  t.equal(copy.headers.get('x-o'), '1')
  copy.headers.set('x-c', '1')
  t.equal(original.headers.get('x-c'), null, 'its own headers')
  t.equal(await copy.text(), 'hooked')
  t.equal(original.bodyUsed, true, 'and the body is shared')

  t.equal(hook(new Proxy(new Response('p'), {})), undefined, 'declines a proxy')
  class Sub extends Response {}
  t.equal(hook(new Sub('s')), undefined, 'declines a subclass')
  t.equal(hook(new Response(new Uint8Array([1]))), undefined, 'declines a mutable byte body')
  const observed = new Response('o')
  t.ok(observed.body, 'reading .body observes it')
  t.equal(hook(observed), undefined, 'declines an observed body')
  t.equal(hook(new Response('n', { statusText: 'Custom' })), undefined, 'declines a custom statusText (a native response)')
  t.equal(hook(new NativeResponse('n')), undefined, 'declines a native response')
  let last: Response = new Response('full')
  let copies = 0
  for (let i = 0; i < 100; i++) {
    const next = hook(last)
    if (next === undefined) break
    copies++
    last = next
  }
  t.equal(copies, 63, 'a group has at most 64 members')
})
