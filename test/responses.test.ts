import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen, rawRequest, rawExchange, parseResponses } from './helpers/net'

function responseApp (): Hono {
  const app = new Hono()
  app.get('/text', (c) => c.text('Hello, World!'))
  app.get('/json', (c) => c.json({ hello: 'wörld' }))
  app.get('/bytes', (c) => c.body(new Uint8Array([1, 2, 3, 4])))
  app.get('/arraybuffer', () => new Response(new Uint8Array([5, 6, 7]).buffer, { headers: { 'content-type': 'application/x-test' } }))
  app.get('/blob', () => new Response(new Blob(['blob body'], { type: 'text/x-blob' })))
  app.get('/null', (c) => c.body(null))
  app.get('/stream', () => new Response(new ReadableStream({
    async start (controller) {
      for (const part of ['a', 'b', 'c']) {
        controller.enqueue(new TextEncoder().encode(part))
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      controller.close()
    }
  }), { headers: { 'content-type': 'text/plain' } }))
  app.get('/no-content', (c) => c.body(null, 204))
  app.get('/no-content-body', () => new Response(null, { status: 204, headers: { 'x-kept': '1' } }))
  app.get('/not-modified', (c) => c.body(null, 304, { etag: '"v1"' }))
  app.get('/cookies', (c) => {
    c.header('set-cookie', 'a=1; Path=/', { append: true })
    c.header('set-cookie', 'b=2, with comma; Path=/', { append: true })
    return c.text('cookies')
  })
  app.get('/status-text', () => new Response('teapot', { status: 418, statusText: 'Short And Stout' }))
  app.get('/created', (c) => c.json({ made: true }, 201, { location: '/x/1' }))
  app.get('/redirect', (c) => c.redirect('/v2/text', 301))
  app.get('/big', (c) => c.text('x'.repeat(64 * 1024)))
  return app
}

async function setup (t: Tap.Test): Promise<{ port: number, base: string }> {
  const server = Fastify()
  await server.register(fastifyHono, { app: responseApp(), prefix: '/v2' })
  t.teardown(() => server.close())
  return listen(server)
}

test('every body type arrives with its status, headers and bytes; buffered bodies carry a Content-Length', async (t) => {
  const { port } = await setup(t)
  // c.text() without headers relies on the Response class's default type.
  const textType = new Response('').headers.get('content-type')
  // c.json()'s type, as this Hono sets it (older versions add a charset).
  const jsonType = (await new Hono().get('/', (c) => c.json({})).request('/')).headers.get('content-type')
  const cases: Array<[string, string, string | null, string]> = [
    ['/v2/text', 'Hello, World!', textType, 'content-length'],
    ['/v2/json', '{"hello":"wörld"}', jsonType, 'content-length'],
    ['/v2/bytes', '\x01\x02\x03\x04', null, 'content-length'],
    ['/v2/arraybuffer', '\x05\x06\x07', 'application/x-test', 'content-length'],
    ['/v2/blob', 'blob body', 'text/x-blob', 'content-length'],
    ['/v2/big', 'x'.repeat(64 * 1024), textType, 'content-length'],
    ['/v2/stream', 'abc', 'text/plain', 'chunked']
  ]
  for (const [path, body, type, framing] of cases) {
    const res = await rawRequest(port, 'GET', path)
    t.equal(res.status, 200, path)
    t.equal(res.framing, framing, `${path} framing`)
    t.equal(Buffer.from(res.body, 'latin1').toString(path === '/v2/json' ? 'utf8' : 'latin1'), body, `${path} body`)
    if (type !== null) t.same(res.headers['content-type'], [type], `${path} content type`)
    if (framing === 'content-length') t.equal(Number(res.headers['content-length'][0]), Buffer.byteLength(res.body, 'latin1'), `${path} length`)
  }
})

test('null bodies, 204 and 304', async (t) => {
  const { port } = await setup(t)
  const empty = await rawRequest(port, 'GET', '/v2/null')
  t.equal(empty.status, 200)
  t.same(empty.headers['content-length'], ['0'])
  t.equal(empty.body, '')

  for (const path of ['/v2/no-content', '/v2/no-content-body']) {
    const res = await rawRequest(port, 'GET', path)
    t.equal(res.status, 204, path)
    t.equal(res.headers['content-length'], undefined, `${path}: no Content-Length`)
    t.equal(res.headers['transfer-encoding'], undefined, `${path}: no Transfer-Encoding`)
  }
  const notModified = await rawRequest(port, 'GET', '/v2/not-modified')
  t.equal(notModified.status, 304)
  t.same(notModified.headers.etag, ['"v1"'])
  t.equal(notModified.headers['content-length'], undefined)
})

test('HEAD has the headers of a GET and no body', async (t) => {
  const { port } = await setup(t)
  for (const path of ['/v2/text', '/v2/json', '/v2/created']) {
    const get = await rawRequest(port, 'GET', path)
    const head = await rawRequest(port, 'HEAD', path)
    t.equal(head.status, get.status, path)
    t.same(head.headers['content-type'], get.headers['content-type'], `${path} content type`)
    t.same(head.headers.location, get.headers.location, `${path} location`)
    t.equal(head.body, '', `${path}: no body`)
    t.same(head.headers['content-length'], get.headers['content-length'], `${path}: the length the GET has`)
  }
})

test('each Set-Cookie stays separate; status text and redirects are kept', async (t) => {
  const { port } = await setup(t)
  const cookies = await rawRequest(port, 'GET', '/v2/cookies')
  t.same(cookies.headers['set-cookie'], ['a=1; Path=/', 'b=2, with comma; Path=/'])

  const teapot = await rawRequest(port, 'GET', '/v2/status-text')
  t.equal(teapot.status, 418)
  t.equal(teapot.reason, 'Short And Stout', 'a custom statusText is the reason phrase')

  const redirect = await rawRequest(port, 'GET', '/v2/redirect')
  t.equal(redirect.status, 301)
  t.same(redirect.headers.location, ['/v2/text'])

  const created = await rawRequest(port, 'GET', '/v2/created')
  t.equal(created.status, 201)
  t.same(created.headers.location, ['/x/1'])
})

test('HTTP/1.0 and pipelined keep-alive requests are framed correctly', async (t) => {
  const { port } = await setup(t)
  const old = await rawRequest(port, 'GET', '/v2/text', { version: '1.0' })
  t.equal(old.status, 200)
  t.equal(old.body, 'Hello, World!')
  t.same(old.headers['content-length'], ['13'], 'HTTP/1.0 gets a Content-Length too')

  const oldStream = await rawRequest(port, 'GET', '/v2/stream', { version: '1.0' })
  t.equal(oldStream.framing, 'close', 'an HTTP/1.0 stream is framed by closing the connection')
  t.equal(oldStream.body, 'abc')

  const paths = ['/v2/text', '/v2/json', '/v2/no-content', '/v2/stream', '/v2/null', '/v2/not-modified', '/v2/big', '/v2/text']
  const methods = ['GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'HEAD', 'GET']
  const requests = paths.map((path, i) => `${methods[i]} ${path} HTTP/1.1\r\nHost: x\r\n${i === paths.length - 1 ? 'Connection: close\r\n' : ''}\r\n`).join('')
  const responses = parseResponses(await rawExchange(port, requests), methods)
  t.same(responses.map((r) => r.status), [200, 200, 204, 200, 200, 304, 200, 200])
  t.equal(responses[0].body, 'Hello, World!')
  t.equal(responses[3].body, 'abc')
  t.equal(responses[7].body, 'Hello, World!', 'the last response is intact after all the others')
})
