// Type-level tests of the ready-made Env (ES module consumer): `c.env` is
// typed without a hand-written Bindings type, and `outgoing` is the raw
// response, with no `!`, where @hono/node-server's helpers take it.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { Hono, type Context, type ExecutionContext } from 'hono'
import type { Http2Bindings, HttpBindings } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import { serveStatic } from '@hono/node-server/serve-static'
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response'
import { upgradeWebSocket } from 'fastify-hono/ws'
import fastifyHono, { type FastifyHonoEnv, type FastifyHonoExecutionContext, type FastifyHonoUpgradeEnv } from 'fastify-hono'

// Either HTTP version: Fastify's side typed, the raw pair never undefined.
const app = new Hono<FastifyHonoEnv>()
app.use('/static/*', serveStatic({ root: './public' }))
app.get('/', (c) => {
  const request: FastifyRequest = c.env.request
  const reply: FastifyReply = c.env.reply
  const fastify: FastifyInstance = c.env.fastify
  const incoming: IncomingMessage | Http2ServerRequest = c.env.incoming
  const outgoing: ServerResponse | Http2ServerResponse = c.env.outgoing
  // Assignable to what @hono/node-server hands its own apps.
  const bindings: HttpBindings | Http2Bindings = c.env
  const { remote } = getConnInfo(c)
  return c.json({ id: request.id, code: reply.statusCode, url: fastify.prefix, incoming: incoming.url, sent: outgoing.headersSent, bindings: typeof bindings, address: remote.address })
})
// @ts-expect-error: either version: an HTTP/1-only class needs narrowing
app.get('/h1', (c) => c.text(String(((r: ServerResponse) => r.statusCode)(c.env.outgoing))))

// HTTP/1 only: exactly node-server's HttpBindings pair, writable without `!`.
const http1 = new Hono<FastifyHonoEnv<'http1'>>()
http1.get('/raw', (c) => {
  const bindings: HttpBindings = c.env
  bindings.outgoing.writeHead(200, { 'content-type': 'text/plain' })
  c.env.outgoing.end('written by the app')
  return RESPONSE_ALREADY_SENT
})

// HTTP/2 only: node-server's Http2Bindings pair.
const http2 = new Hono<FastifyHonoEnv<'http2'>>()
http2.get('/', (c) => {
  const bindings: Http2Bindings = c.env
  const stream = c.env.outgoing.stream
  return c.text(`${bindings.incoming.authority} ${stream.id ?? ''}`)
})
// @ts-expect-error: an HTTP/2 response is not an HTTP/1 one
http2.get('/h1', (c) => c.text(String(((r: ServerResponse) => r.statusCode)(c.env.outgoing))))

// An upgrade context says what it has: no response yet.
const upgrades = new Hono<FastifyHonoUpgradeEnv>()
upgrades.get('/ws', upgradeWebSocket((c: Context<FastifyHonoUpgradeEnv>) => {
  const none: undefined = c.env.outgoing
  return { onOpen (_event, ws) { ws.send(`${c.env.request.id} ${String(none)}`) } }
}))
// @ts-expect-error: no response during an upgrade
upgrades.get('/raw', (c) => { c.env.outgoing.end(); return c.body(null) })

// Every one of them mounts.
const server = Fastify()
server.register(fastifyHono, { app, prefix: '/a' })
server.register(fastifyHono, { app: http1, prefix: '/b' })
server.register(fastifyHono, { app: http2, prefix: '/c' })
server.register(fastifyHono, { app: upgrades, prefix: '/d' })

// What is mounted, listed from the instance.
const listed: Array<{ method: string, url: string, prefix: string }> = server.honoRoutes()
console.log(listed)

// c.executionCtx: Hono's ExecutionContext, which the mount provides
// (waitUntil for work after the response); the plugin's own type of it fits
// where Hono's is taken, and a fetch app may name it for its third argument.
app.get('/after', (c) => {
  c.executionCtx.waitUntil(Promise.resolve('audit written'))
  c.executionCtx.passThroughOnException()
  // @ts-expect-error: waitUntil takes a promise
  c.executionCtx.waitUntil()
  return c.text('accepted')
})
const mountContext = {} as FastifyHonoExecutionContext
const asHono: ExecutionContext = mountContext
const props: Record<string, unknown> = mountContext.props
export const contextTypes = [asHono, props]
await Fastify().register(fastifyHono, {
  app: { fetch: (_request: Request, _env: unknown, ctx: FastifyHonoExecutionContext) => { ctx.waitUntil(Promise.resolve()); return new Response('ok') } },
  closeTimeout: 10_000
})
