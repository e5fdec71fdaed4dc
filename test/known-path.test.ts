// The view's getPath (lib/internals/hono.ts, useKnownPath): where the app's
// getPath is one of Hono's defaults, the routing path is taken from what the
// bridge put in the URL instead of scanning the URL. It must route exactly
// as Hono's own getPath does: each target is answered by the mount and by
// the app's own fetch with the same URL, strict and not, and an app with
// its own getPath option keeps it.
import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'

const TARGETS = [
  '/a', '/a/', '/a/b', '/a/b/', '/a?x=1', '/a/?x=1', '/a/?x=/b/', '/a%2Fb', '/a/%62', '/a%20b/?q=%25',
  '/', '/?x=1', '/a/b?x=%2F', '/a:b@c!$&()*+,;=', '/a/b.c~d_e-f', '/A/B', '/a?', '/a/??x'
]

function app (options?: ConstructorParameters<typeof Hono>[0]): Hono {
  const hono = new Hono(options)
  hono.get('/a', (c) => c.text(`a ${c.req.path}`))
  hono.get('/a/b', (c) => c.text(`a/b ${c.req.path}`))
  hono.all('*', (c) => c.text(`other ${c.req.path} ${c.req.url}`, 404))
  return hono
}

for (const [name, options] of [
  ['strict', undefined],
  ['not strict', { strict: false }],
  ['own getPath', { getPath: (request: Request) => new URL(request.url).pathname.toLowerCase() }]
] as const) {
  test(`the mount routes as the app does (${name})`, async (t) => {
    const hono = app(options)
    const fastify = Fastify()
    t.teardown(() => fastify.close())
    await fastify.register(fastifyHono, { app: hono })
    for (const target of TARGETS) {
      const mounted = await fastify.inject({ method: 'GET', url: target, headers: { host: 'example.com' } })
      const own = await hono.fetch(new Request('http://example.com' + target))
      t.equal(mounted.statusCode, own.status, `${target}: status`)
      t.equal(mounted.body, await own.text(), `${target}: body`)
    }
  })
}
