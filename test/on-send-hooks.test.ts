import { test } from 'tap'
import { Readable } from 'node:stream'
import { setImmediate as tick } from 'node:timers/promises'
import { gunzipSync } from 'node:zlib'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifyCompress from '@fastify/compress'
import fastifyEtag from '@fastify/etag'
import { Hono } from 'hono'
import { setCookie } from 'hono/cookie'
import fastifyHono from 'fastify-hono'
import { logCollector } from './helpers/compat'
import { http2Request, listen, rawRequest, type WireResponse } from './helpers/net'
import { refuses } from './helpers/plugin-loads'

// What the scopes below register. A Fastify that refuses one (a 6.0.0 before
// its release for it) skips the tests that build them, saying why.
const onSendPlugins = refuses('@fastify/cookie', '@fastify/compress', '@fastify/etag')

// The route's onSend hooks run on the plugin's own path, with Fastify's
// semantics, and the response on the wire is the one reply.send gives: each
// scope below mounts an app with the plugin (/<scope>/m) and serves the very
// same app through a plain Fastify route that hands its Response to
// reply.send (/<scope>/ref), under the same hooks and plugins. The debug log
// says which way each mounted response went.

const BIG = 'big text, compressible. '.repeat(200) // 4,800 bytes: above @fastify/compress's 1,024-byte threshold

function createApp (): Hono {
  const app = new Hono()
  app.get('/text', (c) => c.text('hello'))
  app.get('/big', (c) => c.text(BIG))
  app.get('/json', (c) => c.json({ a: 1, list: [1, 2, 3] }))
  app.get('/bytes', (c) => c.body(new Uint8Array([1, 2, 3, 250])))
  app.get('/typed', (c) => c.body('<p>html</p>', 200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'max-age=60' }))
  app.get('/cookie', (c) => {
    setCookie(c, 'fromHono', 'h')
    return c.text('with a cookie')
  })
  app.get('/empty', (c) => c.body(null))
  app.get('/no-content', (c) => c.body(null, 204))
  app.get('/created', (c) => c.text('made', 201, { location: '/made/1' }))
  app.get('/native', () => new Response(new Blob(['a native body, complete'])))
  app.get('/boom', (c) => {
    setCookie(c, 'session', 'secret')
    return c.text('boom', 200, { 'cache-control': 'public, max-age=600', 'x-app': 'yes' })
  })
  app.get('/boom-404', (c) => c.text('boom', 404, { 'x-app': 'yes' }))
  return app
}

/** A plain Fastify route doing what a user without this plugin would: reply.send with the app's Response, read whole. */
function referenceRoute (app: Hono, base: string) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const path = request.url.slice(base.length)
    const response = await app.fetch(new Request(`http://localhost${path}`, { method: request.method }))
    reply.code(response.status)
    for (const [name, value] of response.headers) reply.header(name, value)
    const body = response.body === null || response.status === 204 ? undefined : Buffer.from(await response.arrayBuffer())
    return reply.send(body)
  }
}

type Scope = (scope: FastifyInstance) => Promise<void> | void

/** Each scope: its hooks and plugins, the mounted app and the reference route under them. */
const scopes: Record<string, Scope> = {
  cookie: async (scope) => {
    await scope.register(fastifyCookie)
    scope.addHook('onRequest', async (request, reply) => { reply.setCookie('fromFastify', 'f', { path: '/' }) })
  },
  compress: async (scope) => {
    await scope.register(fastifyCompress, { global: true })
  },
  etag: async (scope) => {
    await scope.register(fastifyEtag)
  },
  async: (scope) => {
    scope.addHook('onSend', async (request, reply) => { reply.header('x-async-hook', 'ran') })
  },
  callback: (scope) => {
    scope.addHook('onSend', (request, reply, payload, done) => {
      reply.header('x-callback-hook', 'ran')
      done(null, payload)
    })
    // A second one that answers on a later turn of the event loop.
    scope.addHook('onSend', (request, reply, payload, done) => {
      setImmediate(() => { done(null, payload) })
    })
  },
  change: (scope) => {
    scope.addHook('onSend', async (request, reply, payload) => {
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload
      reply.header('x-changed', 'yes')
      // Longer than the app's body: the length follows the new payload.
      return String(payload).toUpperCase() + '!'
    })
  },
  stream: (scope) => {
    // A payload replaced by a stream: Fastify's own writer takes it from there.
    scope.addHook('onSend', async (request, reply, payload) => {
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload
      const bytes = Buffer.from(payload)
      return Readable.from([bytes.subarray(0, 2), bytes.subarray(2)])
    })
  },
  drop: (scope) => {
    scope.addHook('onSend', async () => null)
  },
  throws: (scope) => {
    scope.addHook('onSend', (request, reply, payload, done) => {
      reply.header('x-before-throw', '1')
      if (String(payload) === 'boom') throw new Error('hook failed')
      done(null, payload)
    })
  },
  rejects: (scope) => {
    scope.addHook('onSend', async (request, reply, payload) => {
      if (String(payload) === 'boom') throw new Error('hook rejected')
      return payload
    })
  }
}

async function server (t: Tap.Test, options: { http2?: boolean } = {}): Promise<{ port: number, base: string, ways: (reqUrl: string) => Array<Record<string, unknown>> }> {
  const { stream, lines } = logCollector()
  const logger = { level: 'debug', stream }
  const fastify = (options.http2 === true ? Fastify({ http2: true, logger }) : Fastify({ logger })) as unknown as FastifyInstance
  for (const [name, setup] of Object.entries(scopes)) {
    await fastify.register(async (scope) => {
      await setup(scope)
      const app = createApp()
      await scope.register(fastifyHono, { app, prefix: '/m' })
      scope.all('/ref/*', referenceRoute(app, `/${name}/ref`))
    }, { prefix: `/${name}` })
  }
  t.teardown(() => fastify.close())
  const address = await listen(fastify)
  const ways = (reqUrl: string): Array<Record<string, unknown>> => {
    const ids = new Set(lines.filter((line) => (line.req as { url?: string } | undefined)?.url === reqUrl).map((line) => line.reqId))
    return lines.filter((line) => ids.has(line.reqId) && line.wayOut !== undefined)
  }
  return { ...address, ways }
}

const ignored = new Set(['date', 'connection', 'keep-alive'])

/** Status, headers as a set (Set-Cookie in order), and the body's bytes. */
function view (response: WireResponse): Record<string, unknown> {
  const headers: Record<string, string[]> = {}
  for (const name of Object.keys(response.headers).sort()) if (!ignored.has(name)) headers[name] = response.headers[name]
  return { status: response.status, headers, body: response.body }
}

const gzip = { 'accept-encoding': 'gzip' }

const cases: Array<{ scope: string, path: string, headers?: Record<string, string>, way: string }> = [
  { scope: 'cookie', path: '/text', way: 'fast writer' },
  { scope: 'cookie', path: '/cookie', way: 'fast writer' },
  { scope: 'cookie', path: '/json', way: 'fast writer' },
  { scope: 'compress', path: '/text', way: 'fast writer' },
  { scope: 'compress', path: '/text', headers: gzip, way: 'fast writer' },
  { scope: 'compress', path: '/big', way: 'fast writer' },
  { scope: 'compress', path: '/big', headers: gzip, way: 'fast writer' },
  { scope: 'compress', path: '/big', headers: { 'accept-encoding': 'br;q=0, deflate' }, way: 'fast writer' },
  { scope: 'compress', path: '/json', headers: gzip, way: 'fast writer' },
  { scope: 'etag', path: '/text', way: 'fast writer' },
  { scope: 'etag', path: '/json', way: 'fast writer' },
  { scope: 'etag', path: '/bytes', way: 'fast writer' },
  { scope: 'async', path: '/text', way: 'fast writer' },
  { scope: 'async', path: '/typed', way: 'fast writer' },
  { scope: 'async', path: '/empty', way: 'fast writer' },
  { scope: 'async', path: '/no-content', way: 'fast writer' },
  { scope: 'async', path: '/created', way: 'fast writer' },
  { scope: 'async', path: '/native', way: 'fast writer' },
  { scope: 'callback', path: '/text', way: 'fast writer' },
  { scope: 'callback', path: '/bytes', way: 'fast writer' },
  { scope: 'change', path: '/text', way: 'fast writer' },
  { scope: 'change', path: '/json', way: 'fast writer' },
  { scope: 'drop', path: '/text', way: 'fast writer' },
  { scope: 'stream', path: '/text', way: 'reply.send' },
  { scope: 'stream', path: '/json', way: 'reply.send' },
  { scope: 'stream', path: '/empty', way: 'fast writer' },
  { scope: 'throws', path: '/text', way: 'fast writer' }
]

test('onSend hooks run on the plugin\'s path: the wire is what reply.send gives', { skip: onSendPlugins }, async (t) => {
  const { port, ways } = await server(t)
  for (const { scope, path, headers = {}, way } of cases) {
    const label = `${scope} ${path} ${JSON.stringify(headers)}`
    const mounted = await rawRequest(port, 'GET', `/${scope}/m${path}`, { headers })
    const reference = await rawRequest(port, 'GET', `/${scope}/ref${path}`, { headers })
    t.same(view(mounted), view(reference), `${label}: same status, headers and bytes`)
    const logged = ways(`/${scope}/m${path}`).at(-1)
    t.equal(logged?.wayOut, way, `${label}: ${way}`)
    t.ok((logged?.onSendHooks as number) > 0, `${label}: the plugin ran the hooks`)
  }
})

test('@fastify/compress: compressed when asked and above the threshold, and each hook runs once', { skip: onSendPlugins }, async (t) => {
  const { port } = await server(t)
  const plain = await rawRequest(port, 'GET', '/compress/m/big')
  t.equal(plain.headers['content-encoding'], undefined)
  t.equal(plain.body, BIG)
  const zipped = await rawRequest(port, 'GET', '/compress/m/big', { headers: gzip })
  t.same(zipped.headers['content-encoding'], ['gzip'])
  // @fastify/compress compresses a Buffer at once, and hands back a Buffer.
  t.same(zipped.headers['content-length'], [String(Buffer.byteLength(zipped.body, 'latin1'))])
  t.equal(gunzipSync(Buffer.from(zipped.body, 'latin1')).toString(), BIG, 'compressed once')
  const small = await rawRequest(port, 'GET', '/compress/m/text', { headers: gzip })
  t.equal(small.headers['content-encoding'], undefined, 'below the threshold')
  t.equal(small.body, 'hello')
})

test('@fastify/cookie: a Fastify hook\'s cookie and the app\'s both go out, once each', { skip: onSendPlugins }, async (t) => {
  const { port } = await server(t)
  const response = await rawRequest(port, 'GET', '/cookie/m/cookie')
  t.same(response.headers['set-cookie'], ['fromHono=h; Path=/', 'fromFastify=f; Path=/; SameSite=Lax'])
})

test('@fastify/etag: If-None-Match gets 304 with no body, as on a Fastify route', { skip: onSendPlugins }, async (t) => {
  const { port, ways } = await server(t)
  const first = await rawRequest(port, 'GET', '/etag/m/json')
  const etag = first.headers.etag?.[0]
  t.ok(etag, 'an ETag')
  const mounted = await rawRequest(port, 'GET', '/etag/m/json', { headers: { 'if-none-match': etag! } })
  const reference = await rawRequest(port, 'GET', '/etag/ref/json', { headers: { 'if-none-match': etag! } })
  t.equal(mounted.status, 304)
  t.equal(mounted.body, '')
  t.same(view(mounted), view(reference))
  t.equal(ways('/etag/m/json').at(-1)?.wayOut, 'fast writer')
})

test('a hook that changes the payload: the new bytes and their length go out', { skip: onSendPlugins }, async (t) => {
  const { port } = await server(t)
  const response = await rawRequest(port, 'GET', '/change/m/text')
  t.equal(response.body, 'HELLO!')
  t.same(response.headers['content-length'], ['6'])
  t.same(response.headers['x-changed'], ['yes'])
  const dropped = await rawRequest(port, 'GET', '/drop/m/text')
  t.equal(dropped.status, 200)
  t.same(dropped.headers['content-length'], ['0'])
  t.equal(dropped.body, '')
})

test('a hook that throws or rejects: Fastify\'s error answer, without the app\'s headers', { skip: onSendPlugins }, async (t) => {
  const { port } = await server(t)
  for (const scope of ['throws', 'rejects']) {
    for (const [path, status] of [['/boom', 500], ['/boom-404', 404]] as const) {
      const mounted = await rawRequest(port, 'GET', `/${scope}/m${path}`)
      const reference = await rawRequest(port, 'GET', `/${scope}/ref${path}`)
      t.equal(mounted.status, status, `${scope} ${path}: status`)
      t.equal(mounted.status, reference.status, `${scope} ${path}: the status reply.send gives`)
      t.equal(mounted.body, reference.body, `${scope} ${path}: Fastify's error body`)
      t.match(JSON.parse(mounted.body), { message: scope === 'throws' ? 'hook failed' : 'hook rejected' })
      // reply.send leaves the failed response's headers on the error answer; the plugin takes them back.
      for (const name of ['set-cookie', 'cache-control', 'x-app']) {
        t.equal(mounted.headers[name], undefined, `${scope} ${path}: no ${name}`)
      }
      t.same(mounted.headers['content-type'], ['application/json; charset=utf-8'])
    }
  }
})

test('the payload the hooks get: a string for a text body, as a Fastify route gives it; a Buffer for bytes; undefined for none', async (t) => {
  const seen: Record<string, string> = {}
  const typeOf = (payload: unknown): string => typeof payload === 'string' ? 'string' : Buffer.isBuffer(payload) ? 'Buffer' : payload instanceof ReadableStream ? 'ReadableStream' : String(payload)
  for (const http2 of [false, true]) {
    const fastify = (http2 ? Fastify({ http2: true }) : Fastify()) as unknown as FastifyInstance
    fastify.addHook('onSend', async (request, reply, payload) => { seen[`${http2 ? 'h2 ' : ''}${request.url}`] = typeOf(payload) })
    await fastify.register(fastifyHono, { app: createApp(), prefix: '/m' })
    t.teardown(() => fastify.close())
    const { port, base } = await listen(fastify)
    for (const path of ['/text', '/json', '/bytes', '/empty', '/native']) {
      if (http2) await http2Request(base, `/m${path}`)
      else await rawRequest(port, 'GET', `/m${path}`)
    }
  }
  t.same(seen, {
    '/m/text': 'string',
    '/m/json': 'string',
    '/m/bytes': 'Buffer',
    '/m/empty': 'undefined',
    '/m/native': 'Buffer',
    'h2 /m/text': 'string',
    'h2 /m/json': 'string',
    'h2 /m/bytes': 'Buffer',
    'h2 /m/empty': 'undefined',
    'h2 /m/native': 'Buffer'
  })
})

test('synchronous hooks run before the handler\'s promise settles, and each hook runs once per response', async (t) => {
  const fastify = Fastify()
  const calls: string[] = []
  fastify.addHook('onSend', (request, reply, payload, done) => { calls.push('sync'); done() })
  fastify.addHook('onSend', async () => { calls.push('async'); await tick() })
  fastify.addHook('onSend', (request, reply, payload, done) => { calls.push('callback'); setImmediate(done) })
  await fastify.register(fastifyHono, { app: createApp(), prefix: '/m' })
  t.teardown(() => fastify.close())
  const { port } = await listen(fastify)
  for (const path of ['/text', '/big', '/native', '/empty']) {
    calls.length = 0
    const response = await rawRequest(port, 'GET', `/m${path}`)
    t.equal(response.status, 200)
    t.same(calls, ['sync', 'async', 'callback'], `${path}: each hook once, in order`)
  }
})

test('HTTP/2: the hooks run once and the answer matches reply.send\'s', { skip: onSendPlugins }, async (t) => {
  const { base } = await server(t, { http2: true })
  for (const [scope, path, headers] of [['cookie', '/cookie', {}], ['compress', '/big', gzip], ['etag', '/json', {}], ['change', '/text', {}]] as const) {
    const mounted = await http2Request(base, `/${scope}/m${path}`, { headers })
    const reference = await http2Request(base, `/${scope}/ref${path}`, { headers })
    const strip = (h: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(h).filter(([name]) => name !== 'date').sort())
    t.same(strip(mounted.headers), strip(reference.headers), `${scope} ${path}: headers`)
    t.same(mounted.body, reference.body, `${scope} ${path}: body`)
  }
})

test('a live stream: untouched by the hooks, the stream writer; replaced, Fastify\'s writer; a hook\'s error cancels it', { skip: onSendPlugins }, async (t) => {
  const { stream, lines } = logCollector()
  const fastify = Fastify({ logger: { level: 'debug', stream } })
  let cancelled = 0
  const live = (): Response => {
    let n = 0
    return new Response(new ReadableStream({
      async pull (controller) {
        await tick()
        if (n++ === 3) controller.close()
        else controller.enqueue(new TextEncoder().encode(`chunk ${n};`))
      },
      cancel () { cancelled++ }
    }), { headers: { 'content-type': 'text/plain', 'x-app': 'yes' } })
  }
  const app = new Hono()
  app.get('/live', live)
  await fastify.register(async (scope) => {
    await scope.register(fastifyCookie)
    scope.addHook('onRequest', async (request, reply) => { reply.setCookie('fromFastify', 'f') })
    await scope.register(fastifyHono, { app, prefix: '/m' })
  }, { prefix: '/cookie' })
  await fastify.register(async (scope) => {
    await scope.register(fastifyCompress, { global: true, threshold: 0 })
    await scope.register(fastifyHono, { app, prefix: '/m' })
  }, { prefix: '/compress' })
  await fastify.register(async (scope) => {
    scope.addHook('onSend', async (request, reply, payload) => {
      if (payload instanceof ReadableStream) throw new Error('no streams here')
      return payload
    })
    await scope.register(fastifyHono, { app, prefix: '/m' })
  }, { prefix: '/throws' })
  t.teardown(() => fastify.close())
  const { port } = await listen(fastify)
  const wayOf = (url: string): unknown => {
    const id = lines.find((line) => (line.req as { url?: string } | undefined)?.url === url)?.reqId
    return lines.find((line) => line.reqId === id && line.wayOut !== undefined)?.wayOut
  }

  const kept = await rawRequest(port, 'GET', '/cookie/m/live')
  t.equal(kept.body, 'chunk 1;chunk 2;chunk 3;')
  t.equal(kept.framing, 'chunked')
  t.same(kept.headers['set-cookie'], ['fromFastify=f; SameSite=Lax'])
  t.same(kept.headers['x-app'], ['yes'])
  t.equal(wayOf('/cookie/m/live'), 'stream writer')

  const zipped = await rawRequest(port, 'GET', '/compress/m/live', { headers: gzip })
  t.same(zipped.headers['content-encoding'], ['gzip'])
  t.equal(gunzipSync(Buffer.from(zipped.body, 'latin1')).toString(), 'chunk 1;chunk 2;chunk 3;')
  t.equal(wayOf('/compress/m/live'), 'reply.send')

  const before = cancelled
  const failed = await rawRequest(port, 'GET', '/throws/m/live')
  t.equal(failed.status, 500)
  t.match(JSON.parse(failed.body), { message: 'no streams here' })
  t.equal(failed.headers['x-app'], undefined, 'the app\'s headers taken back')
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(cancelled, before + 1, 'the app\'s stream cancelled')
})

test('a hook fails after another set headers for the response: the error answer carries neither those nor the app\'s, on every way the hooks run', async (t) => {
  const app = new Hono()
  const appHeaders = { 'x-app': '1', 'cache-control': 'max-age=60' }
  // The hooks way: a stored body the plugin prepares itself.
  app.get('/stored', (c) => c.text('hello', 200, appHeaders))
  // reply.send's way: an app-set length keeps the response off the plugin's writers.
  app.get('/length', (c) => c.body('hello', 200, { ...appHeaders, 'content-length': '5' }))
  // reply.send's way with a live stream.
  app.get('/stream', () => new Response(new ReadableStream({ start (controller) { controller.enqueue(new TextEncoder().encode('hi')) } }), { headers: appHeaders }))
  const fastify = Fastify()
  fastify.addHook('onRequest', async (request, reply) => { reply.header('x-from-on-request', 'kept') })
  // As a compression or ETag hook does: headers for the response it is given, not for the error answer.
  fastify.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode < 400) reply.header('content-encoding', 'gzip').header('etag', '"abc"')
    return payload
  })
  fastify.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode < 400) throw new Error('hook failed')
    return payload
  })
  await fastify.register(fastifyHono, { app, prefix: '/m' })
  t.teardown(() => fastify.close())
  const { port } = await listen(fastify)
  for (const path of ['/stored', '/length', '/stream']) {
    const res = await rawRequest(port, 'GET', `/m${path}`)
    t.equal(res.status, 500, `${path}: Fastify's error answer`)
    t.match(JSON.parse(res.body), { message: 'hook failed' }, path)
    for (const name of ['content-encoding', 'etag', 'x-app', 'cache-control']) t.equal(res.headers[name], undefined, `${path}: no ${name}`)
    t.same(res.headers['x-from-on-request'], ['kept'], `${path}: what an onRequest hook set stays`)
  }
})
