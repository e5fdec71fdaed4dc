// What a whole migration carries across: sessions, auth, uploads, request
// context, CSRF, Fastify's HTTP errors, and the Hono helpers an app brings
// with it. The real packages, real sockets; each test backs one row of
// docs/compatibility.md.
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { contextStorage, getContext } from 'hono/context-storage'
import { csrf } from 'hono/csrf'
import { ipRestriction } from 'hono/ip-restriction'
import { jsx, Suspense } from 'hono/jsx'
import { renderToReadableStream } from 'hono/jsx/streaming'
import { streamText } from 'hono/streaming'
import { endTime, startTime, timing } from 'hono/timing'
import { getConnInfo } from '@hono/node-server/conninfo'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import fastifySecureSession from '@fastify/secure-session'
import fastifyJwt from '@fastify/jwt'
import fastifyMultipart from '@fastify/multipart'
import { fastifyRequestContext, requestContext } from '@fastify/request-context'
import fastifyCsrf from '@fastify/csrf-protection'
import fastifySensible from '@fastify/sensible'
import fastifyHono, { type FastifyHonoEnv } from 'fastify-hono'
import { fetchWithTimeout as get, listen } from './helpers/compat'

/** A cookie jar of one client: what the server set, sent back on each request. */
class Jar {
  cookies = new Map<string, string>()
  take (res: Response): string[] {
    const set = res.headers.getSetCookie()
    for (const line of set) {
      const [pair] = line.split(';')
      const at = pair.indexOf('=')
      this.cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1))
    }
    return set
  }

  header (): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }
}

type SessionLike = { get (key: string): unknown, set (key: string, value: unknown): void }
const session = (request: unknown): SessionLike => (request as { session: SessionLike }).session

/** One visit counter, kept in the session and moved on by both sides; the user set by Fastify's login. */
async function sessionRoundTrip (t: Tap.Test, base: string): Promise<void> {
  const jar = new Jar()
  let res = await get(`${base}/login`, { method: 'POST' })
  t.equal(res.status, 200)
  t.ok(jar.take(res).length >= 1, 'the session cookie is set by the Fastify route')
  await res.arrayBuffer()
  // Read and changed in the app.
  res = await get(`${base}/v2/me`, { headers: { cookie: jar.header() } })
  jar.take(res)
  t.same(await res.json(), { user: 'ada', visits: 1 }, 'the app reads what the Fastify route wrote, and changes it')
  res = await get(`${base}/v2/me`, { headers: { cookie: jar.header() } })
  jar.take(res)
  t.same(await res.json(), { user: 'ada', visits: 2 })
  // Read and changed back in Fastify.
  res = await get(`${base}/visits`, { headers: { cookie: jar.header() } })
  jar.take(res)
  t.same(await res.json(), { visits: 2 }, 'Fastify reads what the app wrote')
  res = await get(`${base}/v2/me`, { headers: { cookie: jar.header() } })
  t.same(await res.json(), { user: 'ada', visits: 12 }, 'and the app sees what Fastify changed')
}

function sessionApp (): Hono<FastifyHonoEnv> {
  const app = new Hono<FastifyHonoEnv>()
  app.get('/me', (c) => {
    const s = session(c.env.request)
    const visits = Number(s.get('visits') ?? 0) + 1
    s.set('visits', visits)
    return c.json({ user: s.get('user'), visits })
  })
  return app
}

function sessionRoutes (server: ReturnType<typeof Fastify>): void {
  server.post('/login', async (request) => {
    session(request).set('user', 'ada')
    return { ok: true }
  })
  server.get('/visits', async (request) => {
    const s = session(request)
    const visits = s.get('visits')
    s.set('visits', Number(visits) + 9)
    return { visits }
  })
}

t.test('@fastify/session: a session written on one side is read and changed on the other', async (t) => {
  const server = Fastify()
  await server.register(fastifyCookie)
  await server.register(fastifySession, { secret: 'a secret with at least 32 characters!', cookie: { secure: false }, saveUninitialized: false })
  sessionRoutes(server)
  await server.register(fastifyHono, { app: sessionApp(), prefix: '/v2' })
  await sessionRoundTrip(t, await listen(t, server))
})

t.test('@fastify/secure-session: the encrypted cookie session, written on one side, read and changed on the other', async (t) => {
  const server = Fastify()
  await server.register(fastifySecureSession, { key: Buffer.alloc(32, 7), cookie: { path: '/' } })
  sessionRoutes(server)
  await server.register(fastifyHono, { app: sessionApp(), prefix: '/v2' })
  await sessionRoundTrip(t, await listen(t, server))
})

t.test('@fastify/jwt: jwtVerify() in a hook guards the mount, and the app reads c.env.request.user', async (t) => {
  const server = Fastify()
  await server.register(fastifyJwt, { secret: 'a jwt secret' })
  server.post('/token', async () => ({ token: server.jwt.sign({ sub: 'ada', role: 'admin' }) }))
  await server.register(async (scope) => {
    scope.addHook('onRequest', async (request) => { await request.jwtVerify() })
    const app = new Hono<FastifyHonoEnv>()
    app.get('/me', (c) => c.json({ user: c.env.request.user }))
    await scope.register(fastifyHono, { app, prefix: '/v2' })
  })
  const base = await listen(t, server)

  let res = await get(`${base}/v2/me`)
  t.equal(res.status, 401, 'no token: refused before the app')
  t.match(await res.json(), { code: 'FST_JWT_NO_AUTHORIZATION_IN_HEADER' })
  res = await get(`${base}/v2/me`, { headers: { authorization: 'Bearer not.a.token' } })
  t.equal(res.status, 401)
  await res.arrayBuffer()
  const { token } = await (await get(`${base}/token`, { method: 'POST' })).json() as { token: string }
  res = await get(`${base}/v2/me`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(res.status, 200)
  t.match(await res.json(), { user: { sub: 'ada', role: 'admin', iat: Number } })
})

t.test('@fastify/multipart registered globally: a Fastify route and the app\'s parseBody() get the same upload', async (t) => {
  const server = Fastify()
  await server.register(fastifyMultipart)
  server.post('/upload', async (request) => {
    const file = await request.file()
    if (file === undefined) return { file: null }
    const content = (await file.toBuffer()).toString()
    return { field: file.fieldname, name: file.filename, type: file.mimetype, content, note: (file.fields.note as { value?: string } | undefined)?.value }
  })
  const app = new Hono<FastifyHonoEnv>()
  app.post('/upload', async (c) => {
    const body = await c.req.parseBody()
    const file = body.doc as File
    return c.json({ field: 'doc', name: file.name, type: file.type, content: await file.text(), note: body.note })
  })
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const base = await listen(t, server)

  const form = (): FormData => {
    const data = new FormData()
    data.append('note', 'quarterly')
    data.append('doc', new Blob(['a,b\n1,2\n'], { type: 'text/csv' }), 'report.csv')
    return data
  }
  const expected = { field: 'doc', name: 'report.csv', type: 'text/csv', content: 'a,b\n1,2\n', note: 'quarterly' }
  const fromFastify = await get(`${base}/upload`, { method: 'POST', body: form() })
  t.equal(fromFastify.status, 200)
  t.same(await fromFastify.json(), expected, "Fastify's multipart route")
  const fromApp = await get(`${base}/v2/upload`, { method: 'POST', body: form() })
  t.equal(fromApp.status, 200)
  t.same(await fromApp.json(), expected, "the app's parseBody(), untouched by the global plugin")
})

t.test('@fastify/request-context: values set in a hook are read in the app across awaits and inside a streamed body', async (t) => {
  const server = Fastify()
  await server.register(fastifyRequestContext)
  server.addHook('onRequest', async (request) => {
    request.requestContext.set('tenant' as never, `tenant-of-${request.id}` as never)
  })
  const app = new Hono<FastifyHonoEnv>()
  app.get('/awaits', async (c) => {
    await sleep(5)
    const first = requestContext.get('tenant' as never) as unknown
    await new Promise((resolve) => setImmediate(resolve))
    return c.json({ first, second: c.env.request.requestContext.get('tenant' as never) as unknown, id: c.env.request.id })
  })
  app.get('/stream', (c) => streamText(c, async (stream) => {
    for (let i = 0; i < 3; i++) {
      await sleep(5)
      await stream.writeln(String(requestContext.get('tenant' as never)))
    }
  }))
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const base = await listen(t, server)

  // Two at once: each sees its own.
  const [a, b] = await Promise.all([get(`${base}/v2/awaits`), get(`${base}/v2/awaits`)])
  for (const res of [a, b]) {
    const body = await res.json() as { first: string, second: string, id: string }
    t.same(body, { first: `tenant-of-${body.id}`, second: `tenant-of-${body.id}`, id: body.id })
  }
  const streamed = await get(`${base}/v2/stream`)
  const lines = (await streamed.text()).trim().split('\n')
  t.equal(lines.length, 3)
  t.ok(lines.every((line) => /^tenant-of-req-\w+$/.test(line) && line === lines[0]), `inside the stream: ${lines.join(', ')}`)
})

t.test('@fastify/csrf-protection guards the mount; hono/csrf inside the app', async (t) => {
  const server = Fastify()
  await server.register(fastifyCookie)
  await server.register(fastifyCsrf)
  server.get('/csrf', async (request, reply) => ({ token: reply.generateCsrf() }))
  await server.register(async (scope) => {
    scope.addHook('onRequest', scope.csrfProtection)
    await scope.register(fastifyHono, { app: new Hono().post('/transfer', (c) => c.json({ done: true })), prefix: '/v2' })
  })
  const app = new Hono()
  app.use(csrf({ origin: 'http://app.test' }))
  app.post('/form', (c) => c.text('posted'))
  await server.register(fastifyHono, { app, prefix: '/hono' })
  const base = await listen(t, server)

  const jar = new Jar()
  let res = await get(`${base}/v2/transfer`, { method: 'POST' })
  t.equal(res.status, 403, '@fastify/csrf-protection: no token, refused before the app')
  t.match(await res.json(), { code: 'FST_CSRF_MISSING_SECRET' })
  res = await get(`${base}/csrf`)
  jar.take(res)
  const { token } = await res.json() as { token: string }
  res = await get(`${base}/v2/transfer`, { method: 'POST', headers: { cookie: jar.header(), 'csrf-token': 'wrong' } })
  t.equal(res.status, 403, 'a wrong token')
  await res.arrayBuffer()
  res = await get(`${base}/v2/transfer`, { method: 'POST', headers: { cookie: jar.header(), 'csrf-token': token } })
  t.equal(res.status, 200)
  t.same(await res.json(), { done: true })

  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  res = await get(`${base}/hono/form`, { method: 'POST', headers: { ...form, origin: 'http://evil.test' }, body: 'a=1' })
  t.equal(res.status, 403, 'hono/csrf: a form from another origin')
  await res.arrayBuffer()
  res = await get(`${base}/hono/form`, { method: 'POST', headers: { ...form, origin: 'http://app.test' }, body: 'a=1' })
  t.same([res.status, await res.text()], [200, 'posted'])
})

t.test('@fastify/sensible: httpErrors thrown from the app answer as from a Fastify route', async (t) => {
  const server = Fastify()
  await server.register(fastifySensible)
  server.get('/fastify/:id', async (request) => { throw server.httpErrors.notFound(`no user ${(request.params as { id: string }).id}`) })
  const app = new Hono<FastifyHonoEnv>()
  app.get('/users/:id', (c) => { throw c.env.fastify.httpErrors.notFound(`no user ${c.req.param('id')}`) })
  app.get('/teapot', (c) => { throw c.env.fastify.httpErrors.createError(418, 'short and stout') })
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const base = await listen(t, server)

  const fromFastify = await get(`${base}/fastify/7`)
  const fromApp = await get(`${base}/v2/users/7`)
  t.equal(fromApp.status, 404)
  t.same(await fromApp.json(), await fromFastify.json(), 'the same answer as a Fastify route')
  const teapot = await get(`${base}/v2/teapot`)
  t.equal(teapot.status, 418)
  t.match(await teapot.json(), { statusCode: 418, message: 'short and stout' })
})

t.test('hono/jsx streaming with Suspense: the fallback goes out first, the rest when it resolves', async (t) => {
  let release!: () => void
  const ready = new Promise<void>((resolve) => { release = resolve })
  async function Slow (): Promise<ReturnType<typeof jsx>> {
    await ready
    return jsx('p', {}, 'loaded')
  }
  const app = new Hono()
  app.get('/page', (c) => {
    const page = jsx('main', {}, jsx(Suspense, { fallback: jsx('p', {}, 'loading…') }, jsx(Slow as never, {})))
    return c.body(renderToReadableStream(page), 200, { 'content-type': 'text/html; charset=utf-8', 'transfer-encoding': 'chunked' })
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const base = await listen(t, server)

  const res = await get(`${base}/v2/page`)
  t.equal(res.status, 200)
  const reader = (res.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  const first = decoder.decode((await reader.read()).value)
  t.match(first, 'loading…', 'the fallback arrives while the component waits')
  t.notMatch(first, 'loaded')
  release()
  let rest = ''
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += decoder.decode(chunk.value)
  t.match(rest, /<template[^>]*>.*loaded/s, 'then the resolved content, with the script that swaps it in')
})

t.test('hono/context-storage: getContext() in code the handler calls sees c.env', async (t) => {
  const app = new Hono<FastifyHonoEnv>()
  app.use(contextStorage())
  const currentRequestId = (): string => getContext<FastifyHonoEnv>().env.request.id
  app.get('/id', async (c) => {
    await sleep(2)
    return c.json({ fromStorage: currentRequestId(), fromContext: c.env.request.id })
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const base = await listen(t, server)
  const ids = await Promise.all([get(`${base}/v2/id`), get(`${base}/v2/id`)].map(async (res) => await (await res).json() as { fromStorage: string, fromContext: string }))
  for (const id of ids) t.equal(id.fromStorage, id.fromContext)
  t.not(ids[0].fromContext, ids[1].fromContext)
})

t.test('hono/ip-restriction with getConnInfo: the socket\'s address allowed or denied', async (t) => {
  const app = new Hono<FastifyHonoEnv>()
  app.use('/allowed/*', ipRestriction(getConnInfo, { allowList: ['127.0.0.1', '::1', '::ffff:127.0.0.1'] }))
  app.use('/denied/*', ipRestriction(getConnInfo, { denyList: ['127.0.0.1', '::ffff:127.0.0.1'] }))
  app.get('/allowed/x', (c) => c.text('in'))
  app.get('/denied/x', (c) => c.text('in'))
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const base = await listen(t, server)
  const allowed = await get(`${base}/v2/allowed/x`)
  t.same([allowed.status, await allowed.text()], [200, 'in'])
  const denied = await get(`${base}/v2/denied/x`)
  t.equal(denied.status, 403)
  await denied.arrayBuffer()
})

t.test('hono/timing: the Server-Timing header carries the app\'s metrics', async (t) => {
  const app = new Hono()
  app.use(timing())
  app.get('/slow', async (c) => {
    startTime(c, 'db', 'the query')
    await sleep(5)
    endTime(c, 'db')
    return c.text('done')
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const base = await listen(t, server)
  const res = await get(`${base}/v2/slow`)
  t.equal(await res.text(), 'done')
  const header = res.headers.get('server-timing') ?? ''
  t.match(header, /(^|,\s*)db;dur=[\d.]+;desc="the query"/)
  t.match(header, /(^|,\s*)total;dur=[\d.]+/)
})
