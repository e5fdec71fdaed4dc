// The headers of lightweight responses (and of the lightweight request) are
// not native Headers objects: every rule is compared with native ones. Null
// bodies throughout: a string body's default Content-Type differs on purpose
// (`text/plain; charset=UTF-8`, the same on every path; see responses.test.ts).
import { inspect } from 'node:util'
import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen, rawExchange } from './helpers/net'
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

const NAMES = ['x-a', 'X-A', 'content-type', 'Set-Cookie', 'set-cookie', 'vary', 'x-b', '', 'bad name', 'ä', 'x\u0100', 'x:y']
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
