// better-auth (a fetch-handler auth library) mounted as a Hono route:
// sign-up answers with several Set-Cookie headers (the session token, the
// cached session data), each goes out intact beside a cookie a Fastify hook
// sets, and they bring the session back. Its memory adapter: no database.
// Backs the better-auth row of docs/compatibility.md.
import t from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyCookie from '@fastify/cookie'
import { betterAuth } from 'better-auth'
import { memoryAdapter } from 'better-auth/adapters/memory'
import fastifyHono from 'fastify-hono'
import { fetchWithTimeout as get, listen } from './helpers/compat'

// Sign-up hashes the password with scrypt, and the first request loads the
// library: seconds on a loaded machine, not a hang.
const SLOW = 30_000

function makeAuth (baseURL: string): ReturnType<typeof betterAuth> {
  return betterAuth({
    baseURL,
    secret: 'a better-auth secret of at least 32 characters',
    database: memoryAdapter({ user: [], session: [], account: [], verification: [] }),
    emailAndPassword: { enabled: true },
    session: { cookieCache: { enabled: true, maxAge: 60 } },
    logger: { disabled: true }
  }) as unknown as ReturnType<typeof betterAuth>
}

t.test('better-auth: sign-up\'s Set-Cookie headers arrive intact beside Fastify\'s, and sign the client in', async (t) => {
  // The auth instance wants the origin it is served at: made on the first request.
  let auth: ReturnType<typeof betterAuth> | undefined
  const app = new Hono()
  app.on(['GET', 'POST'], '/api/auth/*', (c) => (auth ??= makeAuth(new URL(c.req.url).origin)).handler(c.req.raw))
  const server = Fastify()
  await server.register(fastifyCookie)
  server.addHook('onRequest', async (request, reply) => { reply.setCookie('seen', 'by-fastify', { path: '/' }) })
  server.get('/legacy', async () => 'fastify')
  await server.register(fastifyHono, { app, notFound: 'fastify' })
  const base = await listen(t, server)

  const res = await get(`${base}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ email: 'ada@example.test', password: 'a long enough password', name: 'Ada' })
  }, SLOW)
  const body = await res.json() as { user?: { email: string } }
  t.equal(res.status, 200, JSON.stringify(body))
  t.equal(body.user?.email, 'ada@example.test')
  const cookies = res.headers.getSetCookie()
  const names = cookies.map((cookie) => cookie.slice(0, cookie.indexOf('=')))
  t.ok(names.includes('better-auth.session_token') && names.includes('better-auth.session_data'), `better-auth's cookies: ${names.join(', ')}`)
  t.ok(names.includes('seen'), "and the one Fastify's hook set")
  t.equal(new Set(names).size, names.length, 'each cookie once, none merged into another')
  for (const cookie of cookies.filter((cookie) => cookie.startsWith('better-auth.'))) {
    t.match(cookie, /; Path=\/(;|$)/i, `${cookie.slice(0, 30)}…: its attributes intact`)
    t.match(cookie, /; HttpOnly/i)
    t.match(cookie, /; SameSite=Lax/i)
  }

  // They sign the client in.
  const jar = cookies.map((cookie) => cookie.split(';')[0]).join('; ')
  const session = await get(`${base}/api/auth/get-session`, { headers: { cookie: jar } }, SLOW)
  t.equal(session.status, 200)
  t.match(await session.json(), { user: { email: 'ada@example.test', name: 'Ada' }, session: { token: String } })
  const anonymous = await get(`${base}/api/auth/get-session`, {}, SLOW)
  t.equal(await anonymous.text(), 'null', 'without the cookies, no session')
  t.equal(await (await get(`${base}/legacy`)).text(), 'fastify', 'Fastify\'s routes beside it')
})
