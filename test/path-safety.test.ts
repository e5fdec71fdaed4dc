// Path safety: the app never sees a path other than the one Fastify's router
// matched and its hooks saw. A Fastify onRequest hook that guards
// /v2/admin (matching the path as the router does: decoded, case-folded
// where the router is case-insensitive) cannot be bypassed through the
// mount by dot segments, backslashes, encoded slashes or backslashes, or
// the case of the prefix. Each target is also sent to a plain Fastify
// server with a route at /v2/admin, to compare with what Fastify routes.
// Raw node:net requests, since fetch would normalize the targets.
import { test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import WebSocket from 'ws'
import { fastifyWithCase } from './helpers/fastify-options'
import { listen, rawRequest } from './helpers/net'

function guardedPath (url: string, caseSensitive: boolean): boolean {
  let path = url.replace(/^https?:\/\/[^/?]*/i, '').split('?')[0]
  try {
    path = decodeURIComponent(path)
  } catch {}
  if (!caseSensitive) path = path.toLowerCase()
  return path === '/v2/admin' || path.startsWith('/v2/admin/')
}

function honoApp (): Hono {
  const app = new Hono()
  app.get('/admin', (c) => c.text('admin'))
  app.all('*', (c) => c.text(`other ${c.req.path}`))
  return app
}

async function servers (t: Tap.Test, caseSensitive: boolean, websocket = false): Promise<{ mounted: number, reference: number }> {
  const app = honoApp()
  const mounted = await fastifyWithCase(caseSensitive)
  mounted.addHook('onRequest', async (request, reply) => {
    if (guardedPath(request.url, caseSensitive)) return reply.code(403).send('guarded')
  })
  await mounted.register(fastifyHono, { app, prefix: '/v2', ...(websocket ? { websocket: { server: new WebSocket.Server({ noServer: true }) } } : {}) })

  const reference = await fastifyWithCase(caseSensitive)
  reference.get('/v2/admin', async () => 'admin')
  reference.get('/v2/*', async () => 'other')
  const close = (server: FastifyInstance) => () => server.close()
  t.teardown(close(mounted))
  t.teardown(close(reference))
  return { mounted: (await listen(mounted)).port, reference: (await listen(reference)).port }
}

/** What the same Hono app answers on its own, for a path whose decoding depends on the hono version. */
async function honoAlone (path: string): Promise<string> {
  const answer = await (await honoApp().request(`http://localhost${path}`)).text()
  if (!answer.startsWith('other ')) throw new Error(`the app alone routes ${path} to ${answer}`)
  return answer
}

async function outcome (port: number, target: string): Promise<string> {
  const response = await rawRequest(port, 'GET', target)
  if (response.status !== 200) {
    const code = response.headers['content-type']?.[0]?.includes('json') === true ? (JSON.parse(response.body) as { code?: string }).code : undefined
    return code === undefined ? String(response.status) : `${response.status} ${code}`
  }
  return response.body
}

test('dot segments, backslashes, encoded slashes and backslashes: the guard on /v2/admin holds', async (t) => {
  const { mounted, reference } = await servers(t, true)
  const cases: Array<[target: string, fastify: string, mount: string]> = [
    ['/v2/admin', 'admin', '403'],
    ['/v2/%61dmin', 'admin', '403'],
    // The URL parser would resolve these to /admin; Fastify's router does not.
    ['/v2/x/../admin', 'other', '400 FST_ERR_HONO_BAD_REQUEST'],
    ['/v2/./admin', 'other', '400 FST_ERR_HONO_BAD_REQUEST'],
    ['/v2/x/%2e%2e/admin', 'other', '400 FST_ERR_HONO_BAD_REQUEST'],
    ['/v2/x/%2E./admin', 'other', '400 FST_ERR_HONO_BAD_REQUEST'],
    ['/v2/../v2/admin', 'other', '400 FST_ERR_HONO_BAD_REQUEST'],
    // The URL parser reads a backslash as a slash: refused before `?`, as @hono/node-server 2.1.6+ does.
    ['/v2/x\\..\\admin', 'other', '400 FST_ERR_HONO_BAD_REQUEST'],
    ['/v2/x\\admin', 'other', '400 FST_ERR_HONO_BAD_REQUEST'],
    ['http://localhost/v2/x\\..\\admin', 'other', '400 FST_ERR_HONO_BAD_REQUEST'],
    ['/v2/other?q=a\\..\\admin', 'other', 'other /other'],
    // Encoded: the URL parser keeps them, and Hono's path decodes neither into a separator.
    ['/v2/x%2F..%2Fadmin', 'other', 'other /x%2F..%2Fadmin'],
    // Hono 4.13 decodes %5C in c.req.path, 4.1 does not: the app's own answer, which is never /admin's.
    ['/v2/x%5C..%5Cadmin', 'other', await honoAlone('/x%5C..%5Cadmin')],
    // Not under the prefix for the router (one segment); the guard, decoding %2F, refuses it anyway.
    ['/v2%2Fadmin', '404', '403']
  ]
  for (const [target, fastify, mount] of cases) {
    t.equal(await outcome(reference, target), fastify, `${target}: what Fastify routes`)
    t.equal(await outcome(mounted, target), mount, `${target}: what the mount answers`)
  }
})

test('the prefix in another case: guarded as the router matches it', async (t) => {
  for (const caseSensitive of [true, false]) {
    const { mounted, reference } = await servers(t, caseSensitive)
    for (const target of ['/V2/admin', '/v2/ADMIN', '/V2/ADMIN']) {
      const fastify = await outcome(reference, target)
      const mount = await outcome(mounted, target)
      if (fastify === 'admin') t.equal(mount, '403', `caseSensitive ${String(caseSensitive)}, ${target}: Fastify routes it to /v2/admin, the guard holds`)
      else t.not(mount, 'admin', `caseSensitive ${String(caseSensitive)}, ${target}: Fastify does not route it to /v2/admin (${fastify}), nor does the app see /admin (${mount})`)
    }
  }
})

test('a backslash in the path of a WebSocket upgrade is refused too', async (t) => {
  const { mounted } = await servers(t, true, true)
  const response = await rawRequest(mounted, 'GET', '/v2/x\\..\\admin', {
    headers: { upgrade: 'websocket', connection: 'Upgrade', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'sec-websocket-version': '13' }
  })
  t.equal(response.status, 400)
  t.match(JSON.parse(response.body), { code: 'FST_ERR_HONO_BAD_REQUEST' })
})
