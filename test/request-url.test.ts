import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen, parseResponses, rawExchange, rawRequest } from './helpers/net'
import { caseInsensitiveFastify } from './helpers/fastify-options'

function echoApp (): Hono {
  const app = new Hono()
  app.all('*', (c) => c.json({ url: c.req.url, path: c.req.path, method: c.req.method }))
  return app
}

test('the prefix is stripped the way the router matched it', async (t) => {
  const server = await caseInsensitiveFastify()
  await server.register(fastifyHono, { app: echoApp(), prefix: '/v2' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const cases: Array<[string, string]> = [
    ['/%76%32/a', '/a'],
    ['/V2/a', '/a'],
    ['/v2/a%2Fb', '/a%2Fb'],
    ['/v2/%76%32/x', '/%76%32/x'],
    ['/v2?x=/v2/y', '/?x=/v2/y'],
    ['/v2//a', '//a']
  ]
  for (const [target, expected] of cases) {
    const res = await rawRequest(port, 'GET', target)
    t.equal(res.status, 200, target)
    const seen = JSON.parse(res.body) as { url: string }
    t.equal(seen.url, `http://127.0.0.1:${port}${expected}`, `${target} → ${expected}`)
  }
})

test('every ASCII character reaches the app as a native Request would hold it; a dot segment or a backslash in the path is refused', async (t) => {
  // The lightweight Request keeps the URL string as it is only when the URL
  // parser would not change it; everything else goes through the parser.
  const server = Fastify()
  await server.register(fastifyHono, { app: echoApp(), prefix: '/v2' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const origin = `http://127.0.0.1:${port}`
  const targets: string[] = []
  for (let code = 0x21; code <= 0x7e; code++) {
    const character = String.fromCharCode(code)
    targets.push(`/v2/a${character}b`, `/v2/a?q=${character}`)
  }
  for (const segment of ['.', '..', '%2e', '%2E', '.%2e', '%2e.', '%2e%2E', '...', '.a', 'a.', '%2e%2e%2e', '%2f', '%2', '%']) {
    targets.push(`/v2/a/${segment}`, `/v2/a/${segment}/b`, `/v2/a/${segment}?c=d`, `/v2/a?b=/${segment}`, `/v2/a?b=${segment}/`)
  }
  // A backslash or a dot segment in the path would reach the app as another
  // path than the router matched: refused (test/path-safety.test.ts).
  const rewritten = (target: string): boolean => {
    const path = target.split('?')[0]
    return path.includes('\\') || /\/(?:\.|%2e){1,2}(?:\/|$)/i.test(path)
  }
  let answered = 0
  let refused = 0
  for (const target of targets) {
    const res = await rawRequest(port, 'GET', target)
    if (rewritten(target)) {
      t.equal(res.status, 400, `${target}: refused`)
      refused++
      continue
    }
    if (res.status === 400) continue // Node's parser or the router refused the target
    t.equal(res.status, 200, target)
    answered++
    const expected = new URL(origin + target.slice('/v2'.length)).href
    t.equal(JSON.parse(res.body).url, expected, `${target}: ${expected}`)
  }
  t.ok(answered > (targets.length - refused) * 0.9, `${answered} of the ${targets.length - refused} other targets reached the app`)
})

test('a multi-segment prefix with a parameter', async (t) => {
  const app = new Hono().get('/items', (c) => c.json({ path: c.req.path, tenant: c.env.request.params.tenant }))
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/tenants/:tenant' })
  t.teardown(() => server.close())
  const { base } = await listen(server)
  t.same(await (await fetch(base + '/tenants/acme/items')).json(), { path: '/items', tenant: 'acme' })
})

test('the host and protocol come from Fastify, validated', async (t) => {
  const server = Fastify()
  await server.register(fastifyHono, { app: echoApp(), prefix: '/v2' })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  const absolute = await rawRequest(port, 'GET', 'http://evil.example/v2/a?q=1')
  t.equal(absolute.status, 200)
  t.equal(JSON.parse(absolute.body).url, `http://127.0.0.1:${port}/a?q=1`, 'an absolute-form target keeps only its path; the Host header names the host')

  const absoluteQuery = await rawRequest(port, 'GET', 'http://evil.example?/v2/a')
  t.not(absoluteQuery.status, 200, 'a query right after the authority does not reach the mount')

  for (const host of ['evil.example/x?', 'a@b', 'a b', 'host\\x', 'h#f']) {
    const res = await rawRequest(port, 'GET', '/v2/a', { headers: { host } })
    t.equal(res.status, 400, `Host ${JSON.stringify(host)} answers 400`)
    t.notMatch(res.body, /evil/, 'and the app never ran')
  }
  for (const host of ['example.com', 'example.com:8080', '[::1]:3000', 'xn--bcher-kva.example']) {
    const res = await rawRequest(port, 'GET', '/v2/a', { headers: { host } })
    t.equal(res.status, 200, host)
    t.equal(JSON.parse(res.body).url, `http://${host}/a`, host)
  }

  const http10 = await rawRequest(port, 'GET', '/v2/a', { version: '1.0', headers: { host: '' } })
  t.equal(http10.status, 200, 'HTTP/1.0 without a Host')
  t.equal(JSON.parse(http10.body).url, `http://127.0.0.1:${port}/a`, 'falls back to the address the connection came in on')
})

test('trustProxy: X-Forwarded-Proto and X-Forwarded-Host apply', async (t) => {
  const server = Fastify({ trustProxy: true })
  await server.register(fastifyHono, { app: echoApp(), prefix: '/v2' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const res = await rawRequest(port, 'GET', '/v2/a?b=c', { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' } })
  t.equal(JSON.parse(res.body).url, 'https://api.example.com/a?b=c')
  const badHost = await rawRequest(port, 'GET', '/v2/a', { headers: { 'x-forwarded-host': 'evil.example/x?' } })
  t.equal(badHost.status, 400, 'a forwarded host is validated like a Host header')
  const oddProto = await rawRequest(port, 'GET', '/v2/a', { headers: { 'x-forwarded-proto': 'javascript' } })
  t.equal(JSON.parse(oddProto.body).url, `http://127.0.0.1:${port}/a`, 'an unknown forwarded protocol falls back to the socket')

  const untrusted = Fastify()
  await untrusted.register(fastifyHono, { app: echoApp(), prefix: '/v2' })
  t.teardown(() => untrusted.close())
  const other = await listen(untrusted)
  const ignored = await rawRequest(other.port, 'GET', '/v2/a', { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' } })
  t.equal(JSON.parse(ignored.body).url, `http://127.0.0.1:${other.port}/a`, 'without trustProxy the headers are ignored')
})

test('request headers reach the app unchanged, duplicates included', async (t) => {
  const app = new Hono().get('/', (c) => c.json({
    accept: c.req.header('accept'),
    custom: c.req.header('x-custom'),
    multi: c.req.raw.headers.get('x-multi'),
    cookie: c.req.header('cookie')
  }))
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/v2' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const wire = await rawExchange(port, 'GET /v2 HTTP/1.1\r\nHost: x\r\nAccept: text/html\r\nX-Custom: Value With Spaces\r\nX-Multi: one\r\nX-Multi: two\r\nCookie: a=1\r\nConnection: close\r\n\r\n')
  const [res] = parseResponses(wire, ['GET'])
  t.same(JSON.parse(res.body), { accept: 'text/html', custom: 'Value With Spaces', multi: 'one, two', cookie: 'a=1' })
})
