// Mistakes at registration fail it with an FST_ERR_HONO_* error that names
// what is wrong, rather than mounting somewhere unexpected or surfacing the
// router's raw error. Each is checked against what a socket then sees.
import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'

function app (name: string): Hono {
  const hono = new Hono()
  hono.get('/who', (c) => c.text(name))
  return hono
}

test('an unknown option is refused, naming it (a misspelt prefix does not mount the app at the root)', async (t) => {
  const server = Fastify()
  server.register(fastifyHono, { app: app('typo'), prefx: '/v2' } as never)
  await t.rejects(server.ready(), { code: 'FST_ERR_HONO_INVALID_OPTION', statusCode: 500, message: /option "prefx" is not an option .*did you mean "prefix"\?/ })

  const other = Fastify()
  other.register(fastifyHono, { app: app('x'), stripprefix: false } as never)
  await t.rejects(other.ready(), { code: 'FST_ERR_HONO_INVALID_OPTION', message: /option "stripprefix".*did you mean "stripPrefix"/ })

  const far = Fastify()
  far.register(fastifyHono, { app: app('x'), somethingElse: 1 } as never)
  await t.rejects(far.ready(), { code: 'FST_ERR_HONO_INVALID_OPTION', message: /option "somethingElse" is not an option of fastify-hono nor of Fastify's register$/ })
})

test('Fastify\'s own register options are accepted: prefix, logLevel, logSerializers (the first two take effect)', async (t) => {
  const lines: Array<{ level: number, msg: string, who?: string }> = []
  const server = Fastify({
    logger: {
      level: 'info',
      stream: { write (line: string) { lines.push(JSON.parse(line)) } }
    }
  })
  await server.register(fastifyHono, {
    app: app('v2'),
    prefix: '/v2',
    logLevel: 'warn',
    logSerializers: { who: (value: string) => `serialized ${value}` }
  })
  t.teardown(() => server.close())
  const { base } = await listen(server)
  const response = await fetch(`${base}/v2/who`)
  t.same([response.status, await response.text()], [200, 'v2'], 'mounted at the prefix')
  t.notOk(lines.some((line) => line.msg === 'incoming request'), 'logLevel warn: the request logs at info are left out')
})

test('two mounts at one prefix: FST_ERR_HONO_DUPLICATED_MOUNT naming the prefix', async (t) => {
  for (const [first, second, named] of [['/v2', '/v2', '/v2'], ['/v2/', '/v2', '/v2'], ['', '/', '/']]) {
    const server = Fastify()
    server.register(fastifyHono, { app: app('one'), prefix: first })
    server.register(fastifyHono, { app: app('two'), prefix: second })
    await t.rejects(server.ready(), { code: 'FST_ERR_HONO_DUPLICATED_MOUNT', message: `fastify-hono: an app is already mounted at prefix "${named}"` }, `${JSON.stringify(first)} then ${JSON.stringify(second)}`)
  }
  // Two prefixes that differ only by case are two mounts where the router is case-sensitive.
  const server = Fastify()
  await server.register(fastifyHono, { app: app('lower'), prefix: '/v2' })
  await server.register(fastifyHono, { app: app('upper'), prefix: '/V2' })
  t.teardown(() => server.close())
  const { base } = await listen(server)
  t.same(await Promise.all(['/v2/who', '/V2/who'].map(async (path) => await (await fetch(base + path)).text())), ['lower', 'upper'])
})

test('a prefix the router cannot take: FST_ERR_HONO_INVALID_PREFIX naming it', async (t) => {
  for (const prefix of ['/v*', '/v2/*', '/a*b']) {
    const server = Fastify()
    server.register(fastifyHono, { app: app('x'), prefix })
    await t.rejects(server.ready(), { code: 'FST_ERR_HONO_INVALID_PREFIX', message: new RegExp(`^fastify-hono: prefix "${prefix.replace(/[*/]/g, '\\$&')}" cannot be mounted: Wildcard must be the last character`) }, prefix)
  }
})
