// Authentication done once, in Fastify, with @fastify/auth as a preHandler
// hook. The hook runs before the mounted Hono app, so a request without a
// valid token never reaches it; the Hono handlers read the user Fastify put
// on the request through `c.env.request`, and log through `request.log`, so
// their lines carry Fastify's request id.
//
//   node examples/auth.mjs
//   curl -H 'authorization: Bearer alice-token' http://127.0.0.1:3000/api/me
import { pathToFileURL } from 'node:url'
import Fastify from 'fastify'
import fastifyAuth from '@fastify/auth'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'

const tokens = new Map([
  ['alice-token', { name: 'alice', role: 'admin' }],
  ['bob-token', { name: 'bob', role: 'reader' }]
])

/** The check, written once for Fastify and Hono routes alike. */
async function verifyBearer (request) {
  const header = request.headers.authorization ?? ''
  const user = header.startsWith('Bearer ') ? tokens.get(header.slice(7)) : undefined
  if (user === undefined) {
    throw Object.assign(new Error('missing or invalid bearer token'), { statusCode: 401 })
  }
  request.user = user
}

export function createApiApp () {
  const api = new Hono()
  api.get('/me', (c) => {
    const { request } = c.env
    request.log.info({ user: request.user.name }, 'hono handler read the user')
    return c.json({ user: request.user, requestId: request.id })
  })
  api.delete('/things/:id', (c) => {
    const { request } = c.env
    if (request.user.role !== 'admin') {
      request.log.warn({ user: request.user.name }, 'forbidden delete')
      return c.json({ error: 'admins only' }, 403)
    }
    return c.body(null, 204)
  })
  return api
}

export async function build (options = {}) {
  const server = Fastify({ logger: options.logger ?? false })
  server.decorateRequest('user', null)
  await server.register(fastifyAuth)

  // Public: registered outside the guarded scope.
  server.get('/health', async () => ({ ok: true }))

  // Guarded: the hook belongs to this scope, and the mount is registered inside it.
  await server.register(async (guarded) => {
    guarded.addHook('preHandler', guarded.auth([verifyBearer]))
    guarded.get('/legacy/me', async (request) => ({ user: request.user, servedBy: 'fastify' }))
    await guarded.register(fastifyHono, { app: createApiApp(), prefix: '/api' })
  })
  return server
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = await build({ logger: true })
  await server.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
  const base = `http://${process.env.HOST ?? '127.0.0.1'}:${server.server.address().port}`
  console.log(`auth example listening on ${base}
  curl ${base}/api/me                                          # 401 from Fastify
  curl -H 'authorization: Bearer alice-token' ${base}/api/me   # 200 from Hono`)
}
