// Type-level tests of the migration option and the instance's migration API.
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono, { type HonoMigrationRoute, type MigrationOption } from 'fastify-hono'

const migration: MigrationOption = {
  routes: {
    'GET /v2/users/:id': { mirror: { sample: 0.1, ignore: ['/servedAt'], headers: ['location'], maxBytes: 65_536 } },
    'POST /v2/orders': { share: 10, sticky: { header: 'x-user' } },
    'PUT /v2/orders/:id': { mirror: { sideEffectFree: true }, sticky: { cookie: 'sid' } },
    'GET /v2/search': { share: 1, sticky: { address: true } }
  },
  mirrorConcurrency: 4,
  mirrorTimeout: 500,
  logValues: false
}

const fastify = Fastify()
await fastify.register(fastifyHono, { app: new Hono(), prefix: '/v2', migration })
// @ts-expect-error: a sticky key names where it is read
await fastify.register(fastifyHono, { app: new Hono(), migration: { routes: { 'GET /x': { sticky: { query: 'id' } } } } })
// @ts-expect-error: share is a number
await fastify.register(fastifyHono, { app: new Hono(), migration: { routes: { 'GET /x': { share: '10%' } } } })

const routes: HonoMigrationRoute[] = fastify.honoMigration()
const states: Array<'fastify' | 'hono' | 'both'> = routes.map((route) => route.state)
const mirrored: number | undefined = routes[0]?.mirror?.mismatched
const reads: Array<'request' | 'reply' | 'fastify'> | undefined = routes[0]?.readsFastify
const table: string = fastify.printHonoMigration()
fastify.setHonoShare('POST /v2/orders', 25)
// @ts-expect-error: the share is a number
fastify.setHonoShare('POST /v2/orders', '25')
export const migrationTypes = [states, mirrored, reads, table]
