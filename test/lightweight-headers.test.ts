// The headers of lightweight responses (and of the lightweight request) are
// not native Headers objects: every rule is compared with native ones. Null
// bodies throughout: a string body's default Content-Type differs on purpose
// (`text/plain; charset=UTF-8`, the same on every path; see responses.test.ts).
import { inspect } from 'node:util'
import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { http2Request, listen, rawExchange } from './helpers/net'
import { seeded } from './helpers/random'

const NativeResponse = globalThis.Response
const NativeHeaders = globalThis.Headers

type Outcome = { threw: string } | { value: unknown }

function outcome (run: () => unknown): Outcome {
  try {
    return { value: run() }
  } catch (err) {
    return { threw: (err as Error).constructor.name }
  }
}

function snapshot (headers: Headers): unknown {
  const forEach: string[][] = []
  headers.forEach((value, name, parent) => { forEach.push([name, value, String(parent === headers)]) })
  return {
    entries: [...headers],
    keys: [...headers.keys()],
    values: [...headers.values()],
    forEach,
    cookies: headers.getSetCookie()
  }
}

async function withPlugin (t: { teardown: (fn: () => unknown) => void }): Promise<void> {
  const server = Fastify()
  await server.register(fastifyHono, { app: new Hono() })
  t.teardown(() => server.close())
}

const NAMES = ['x-a', 'X-A', 'content-type', 'Cookie', 'cookie', 'Set-Cookie', 'set-cookie', 'vary', 'x-b', '', 'bad name', 'ä', 'x\u0100', 'x:y']
const VALUES: unknown[] = ['v', ' padded ', '\tx\t', 'a, b', '', '\r\nlead', 'a\nb', 'a\0b', 'a\rb', '€', 'ÿ', 42, null, 'c=1; Path=/', 'trail \n']
const OPS = ['append', 'set', 'delete', 'get', 'has', 'getSetCookie', 'missing-argument']

test('a lightweight response\'s Headers follow a native Headers through random programs', async (t) => {
  await withPlugin(t)
  const random = seeded(0x4eade5)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]
  let compared = 0
  for (let program = 0; program < 300; program++) {
    const light = new Response(null).headers
    const native = new NativeResponse(null).headers
    t.not(Object.getPrototypeOf(light), NativeHeaders.prototype, 'not a native Headers object')
    for (let step = 0; step < 12; step++) {
      const op = pick(OPS)
      const name = pick(NAMES)
      const value = pick(VALUES)
      const run = (h: Headers): unknown => {
        const any = h as unknown as Record<string, (...args: unknown[]) => unknown>
        if (op === 'missing-argument') return any.append.call(h, name)
        if (op === 'append' || op === 'set') return any[op].call(h, name, value)
        if (op === 'getSetCookie') return h.getSetCookie()
        return any[op].call(h, name)
      }
      const expected = outcome(() => run(native))
      const actual = outcome(() => run(light))
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        t.same(actual, expected, `program ${program}, step ${step}: ${op}(${JSON.stringify(name)}, ${JSON.stringify(value)})`)
        return
      }
      const want = snapshot(native)
      const got = snapshot(light)
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        t.same(got, want, `program ${program}, step ${step}: state after ${op}(${JSON.stringify(name)}, ${JSON.stringify(value)})`)
        return
      }
      compared++
    }
  }
  t.equal(compared, 300 * 12, 'every step matched')
})

test('initializers: accepted and refused exactly as natively', async (t) => {
  await withPlugin(t)
  const inits: Array<[string, () => unknown]> = [
    ['none', () => undefined],
    ['record', () => ({ 'X-A': ' 1 ', b: '2', 'Set-Cookie': 'c=1' })],
    ['record with a number', () => ({ a: 1 })],
    ['null-prototype record', () => Object.assign(Object.create(null), { a: 'x' })],
    ['pairs', () => [['a', '1'], ['A', '2'], ['set-cookie', 'c1'], ['set-cookie', 'c2']]],
    ['native Headers', () => new NativeHeaders([['a', '1'], ['set-cookie', 'c1'], ['set-cookie', 'c2']])],
    ['Map', () => new Map([['a', '1'], ['b', '2']])],
    ['pair of three', () => [['a', '1', '2']]],
    ['pair of one', () => [['a']]],
    ['bad name in record', () => ({ 'bad name': 'x' })],
    ['bad value in pairs', () => [['a', 'x\ny']]],
    ['non-ByteString value', () => ({ a: '€' })],
    ['string', () => 'a: 1'],
    ['null', () => null],
    ['symbol key', () => ({ [Symbol('s')]: 'x', a: '1' })],
    ['number', () => 5]
  ]
  for (const [label, make] of inits) {
    const expected = outcome(() => snapshot(new NativeResponse(null, { headers: make() as HeadersInit }).headers))
    const actual = outcome(() => snapshot(new Response(null, { headers: make() as HeadersInit }).headers))
    t.same(actual, expected, label)
  }
})

test('identity and interplay with native classes', async (t) => {
  await withPlugin(t)
  const response = new Response('x', { headers: [['x-a', '1'], ['set-cookie', 'c1'], ['set-cookie', 'c2']] })
  const headers = response.headers
  t.ok(headers instanceof Headers, 'instanceof Headers')
  t.ok(headers instanceof NativeHeaders, 'instanceof the native Headers')
  t.equal(Object.prototype.toString.call(headers), '[object Headers]')
  t.same([...new NativeHeaders(headers)], [...headers], 'a native Headers copies it')
  t.same(new NativeHeaders(headers).getSetCookie(), ['c1', 'c2'], 'with each cookie')
  const native = new NativeResponse(null, { headers })
  t.same([...native.headers], [...headers], 'a native Response takes it as init')
  t.match(inspect(headers), /Headers .*x-a.*'1'/s, 'inspect shows the entries')

  // Snapshots: a copy never sees later changes of its source, or the reverse.
  const copy = new Response(response.body, response)
  copy.headers.set('x-a', 'changed')
  headers.append('x-b', 'later')
  t.equal(headers.get('x-a'), '1', 'the source keeps its value')
  t.equal(copy.headers.get('x-b'), null, 'the copy does not see a later append')
  const iterator = headers.entries()
  headers.set('x-c', 'during')
  t.notOk([...iterator].some(([name]) => name === 'x-c'), 'an iterator runs over the entries it started with')
  const pairs = [...headers]
  pairs[0][1] = 'mutated'
  t.not(headers.get(pairs[0][0]), 'mutated', 'iterated pairs are fresh arrays')
})

test('the global Headers is the lightweight one, and native Headers still pass for Headers', async (t) => {
  await withPlugin(t)
  const NativeRequest = globalThis.Request
  t.not(globalThis.Headers, NativeHeaders, 'Headers is replaced')
  const light = new Headers({ a: '1' })
  const native = new NativeHeaders({ a: '1' })
  t.not(Object.getPrototypeOf(light), NativeHeaders.prototype, 'new Headers() is lightweight')
  t.ok(light instanceof Headers && light instanceof NativeHeaders, 'a lightweight Headers is both')
  t.ok(native instanceof Headers, 'a native Headers is instanceof the global')
  t.equal(Headers.prototype.get.call(native, 'a'), '1', 'the methods work on a native object too')
  t.same([...Headers.prototype.entries.call(native)], [['a', '1']])
  class Tagged extends Headers { tag (): string { return 'tagged' } }
  const tagged = new Tagged([['a', '1'], ['b', '2']])
  t.equal(tagged.get('b'), '2', 'a subclass works')
  t.equal(tagged.tag(), 'tagged')
  t.ok(tagged instanceof Tagged, 'and is instanceof its class')
  t.notOk(light instanceof Tagged, 'a plain Headers is not instanceof the subclass')
  t.equal(new NativeRequest('http://a.example/', { headers: light }).headers.get('a'), '1', 'a native Request takes it')
  // Hono's own copies: new Headers(c.res.headers), with cookies.
  const withCookies = new Headers([['set-cookie', 'a=1'], ['set-cookie', 'b=2'], ['x', 'y']])
  t.same(new Headers(withCookies).getSetCookie(), ['a=1', 'b=2'], 'a copy keeps each cookie')
  t.same(new NativeHeaders(withCookies).getSetCookie(), ['a=1', 'b=2'], 'so does a native copy')
})

test('the app sees the request headers a native Request would have', async (t) => {
  const app = new Hono()
  app.get('/h', (c) => c.json({
    entries: [...c.req.raw.headers],
    origin: c.req.header('origin') ?? null,
    all: c.req.header()
  }))
  const server = Fastify()
  await server.register(fastifyHono, { app })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const wire = await rawExchange(port, 'GET /h HTTP/1.1\r\nHost: localhost\r\nX-Dup: one\r\nx-dup: two\r\nOrigin: http://a.example\r\nACCEPT: */*\r\nConnection: close\r\n\r\n')
  const body = JSON.parse(wire.slice(wire.indexOf('\r\n\r\n') + 4))
  const expected = new NativeHeaders([['Host', 'localhost'], ['X-Dup', 'one'], ['x-dup', 'two'], ['Origin', 'http://a.example'], ['ACCEPT', '*/*'], ['Connection', 'close']])
  t.same(body.entries, [...expected], 'the same entries, sorted and combined')
  t.equal(body.origin, 'http://a.example')
  t.same(body.all, Object.fromEntries(expected), 'c.req.header() with no name')
})

// The request's headers are read lazily: get() and has() scan Node's
// rawHeaders until something iterates or changes them. Every answer, before
// and after that point, must be a native Headers' answer.
const REQUEST_NAMES = ['Origin', 'origin', 'ORIGIN', 'X-Dup', 'x-dup', 'Set-Cookie', 'Accept', 'x-empty', 'Cookie', 'X-Long-Header-Name']
const REQUEST_VALUES = ['http://a.example', 'one', 'two, three', '', 'ÿ latin1 é', 'a=1; b=2', '*/*', 'x  y']
const PROBE_NAMES = ['origin', 'ORIGIN', 'x-dup', 'set-cookie', 'cookie', 'accept', 'x-empty', 'x-missing', 'host', 'Host', 'bad name', ':path', '', 'x-long-header-name']

test('request headers follow a native Headers built from the same raw headers, read lazily or not', async (t) => {
  const random = seeded(0x1a2b3c)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]
  const app = new Hono<{ Bindings: { incoming: { rawHeaders: string[] } } }>()
  app.post('/program', async (c) => {
    const ops = await c.req.json() as Array<[string, string, string]>
    const raw = c.env.incoming.rawHeaders
    const pairs: Array<[string, string]> = []
    for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i], raw[i + 1]])
    const native = new NativeHeaders(pairs)
    const light = c.req.raw.headers
    const results: unknown[] = []
    for (const [op, name, value] of ops) {
      const run = (h: Headers): unknown => {
        if (op === 'entries') return [...h]
        if (op === 'append' || op === 'set') { h[op](name, value); return [...h] }
        if (op === 'delete') { h.delete(name); return [...h] }
        return (h as unknown as Record<string, (n: string) => unknown>)[op](name)
      }
      results.push([outcome(() => run(light)), outcome(() => run(native))])
    }
    return c.json(results)
  })
  const server = Fastify()
  await server.register(fastifyHono, { app })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  let compared = 0
  for (let program = 0; program < 40; program++) {
    const lines: string[] = [`Host: 127.0.0.1:${port}`, 'Content-Type: application/json', 'Connection: close']
    for (let i = Math.floor(random() * 8); i > 0; i--) lines.push(`${pick(REQUEST_NAMES)}: ${pick(REQUEST_VALUES)}`)
    // Lazy reads first, then anything: the list is built part way through.
    const ops: Array<[string, string, string]> = []
    for (let i = 0; i < 6; i++) ops.push([pick(['get', 'has']), pick(PROBE_NAMES), ''])
    for (let i = 0; i < 6; i++) ops.push([pick(['get', 'has', 'get', 'append', 'set', 'delete', 'entries']), pick(PROBE_NAMES), pick(REQUEST_VALUES)])
    const body = JSON.stringify(ops)
    const head = `POST /program HTTP/1.1\r\n${lines.join('\r\n')}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
    const wire = await rawExchange(port, Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(body)]))
    const text = Buffer.from(wire, 'latin1').toString('utf8')
    const results = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Array<[unknown, unknown]>
    t.equal(results.length, ops.length, `program ${program} ran every step`)
    for (let i = 0; i < results.length; i++) {
      const [actual, expected] = results[i]
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        t.same(actual, expected, `program ${program}, step ${i}: ${ops[i].join(' ')} with ${JSON.stringify(lines)}`)
        return
      }
      compared++
    }
  }
  t.equal(compared, 40 * 12, 'every step matched')
})

test('a request header value Headers refuses (a NUL, under insecureHTTPParser) fails where it is read', async (t) => {
  const app = new Hono()
  app.get('/h', (c) => {
    const headers = c.req.raw.headers
    return c.json({
      origin: outcome(() => headers.get('origin')),
      hasBad: outcome(() => headers.has('x-bad')),
      bad: outcome(() => headers.get('x-bad')),
      entries: outcome(() => [...headers]),
      again: outcome(() => [...headers]),
      native: outcome(() => new NativeHeaders([['x-bad', 'a\0b']]))
    })
  })
  const server = Fastify({ http: { insecureHTTPParser: true } })
  await server.register(fastifyHono, { app })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const wire = await rawExchange(port, 'GET /h HTTP/1.1\r\nHost: localhost\r\nOrigin: http://a.example\r\nX-Bad: a\0b\r\nConnection: close\r\n\r\n')
  t.match(wire, /^HTTP\/1\.1 200 /, 'the request itself is answered')
  const body = JSON.parse(wire.slice(wire.indexOf('\r\n\r\n') + 4))
  t.same(body.native, { threw: 'TypeError' }, 'a native Headers refuses the value')
  t.same(body.origin, { value: 'http://a.example' }, 'other headers read as usual')
  t.same(body.hasBad, { value: true }, 'has() does not look at values')
  t.same(body.bad, { threw: 'TypeError' }, 'reading the value throws as a native Headers would have')
  t.same(body.entries, { threw: 'TypeError' }, 'so does iterating')
  t.same(body.again, { threw: 'TypeError' }, 'every time')
})

test('HTTP/2 request headers: no pseudo-headers, read lazily or iterated', async (t) => {
  const app = new Hono()
  app.get('/h', (c) => {
    const headers = c.req.raw.headers
    return c.json({
      path: outcome(() => headers.get(':path')),
      custom: headers.get('x-custom'),
      has: headers.has('x-custom'),
      names: [...headers.keys()]
    })
  })
  const server = Fastify({ http2: true })
  await server.register(fastifyHono, { app })
  t.teardown(() => server.close())
  const { base } = await listen(server)
  const { body } = await http2Request(base, '/h', { headers: { 'x-custom': 'yes' } })
  const result = JSON.parse(body.toString())
  t.same(result.path, { threw: 'TypeError' }, 'a pseudo-header name is not a header name')
  t.equal(result.custom, 'yes')
  t.equal(result.has, true)
  t.same(result.names, ['x-custom'], 'only the regular headers')
})
