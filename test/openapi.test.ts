// The mount in @fastify/swagger's document (docs/openapi.md): its catch-all
// routes stay out; an app that describes itself adds its paths under the
// prefix. The documents are fetched as a client would, from
// @fastify/swagger-ui's /documentation/json and /documentation/yaml.
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifySwagger from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import { Hono } from 'hono'
import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi'
import fastifyHono, { type FastifyHonoBindings, type OpenAPIDocument } from 'fastify-hono'
import { fetchWithTimeout as get, listen, logCollector } from './helpers/compat'
import { refuses } from './helpers/plugin-loads'

// A Fastify that refuses them (a 6.0.0 before their releases for it) skips the tests that need them, saying why.
const swaggerRefused = refuses('@fastify/swagger', '@fastify/swagger-ui')

interface Doc {
  openapi: string
  paths: Record<string, Record<string, { summary?: string, operationId?: string, security?: unknown, parameters?: unknown[], responses?: Record<string, { content?: Record<string, { schema: unknown }> }> }>>
  components?: Record<string, Record<string, unknown>>
  tags?: Array<{ name: string, description?: string }>
}

const INFO = { title: 'service', version: '1.0.0' }

/** An OpenAPIHono app: GET /users/{id} and POST /users, with a User schema. */
function usersApp (): OpenAPIHono {
  const app = new OpenAPIHono()
  const User = z.object({ id: z.string(), nick: z.string().nullable() }).openapi('User')
  app.openapi(createRoute({
    method: 'get',
    path: '/users/{id}',
    request: { params: z.object({ id: z.string() }) },
    responses: { 200: { content: { 'application/json': { schema: User } }, description: 'a user' } }
  }), (c) => c.json({ id: c.req.valid('param').id, nick: null }, 200))
  app.openapi(createRoute({
    method: 'post',
    path: '/users',
    request: { body: { content: { 'application/json': { schema: User } } } },
    responses: { 201: { content: { 'application/json': { schema: User } }, description: 'created' } }
  }), (c) => c.json(c.req.valid('json'), 201))
  return app
}

async function registerSwagger (server: FastifyInstance, openapi: Record<string, unknown> = {}): Promise<void> {
  await server.register(fastifySwagger, { openapi: { info: INFO, ...openapi } })
  await server.register(fastifySwaggerUi)
}

async function documentOf (base: string): Promise<Doc> {
  const res = await get(`${base}/documentation/json`)
  if (res.status !== 200) throw new Error(`/documentation/json answered ${res.status}: ${await res.text()}`)
  return await res.json() as Doc
}

for (const order of ['before', 'after'] as const) {
  t.test(`@fastify/swagger registered ${order} the mount: the app's paths join the document under the prefix, the catch-alls stay out`, { skip: swaggerRefused }, async (t) => {
    const server = Fastify()
    if (order === 'before') await registerSwagger(server)
    server.get('/legacy', { schema: { response: { 200: { type: 'string' } } } }, async () => 'legacy')
    await server.register(fastifyHono, { app: usersApp(), prefix: '/v2', openapi: true })
    if (order === 'after') await registerSwagger(server)
    const base = await listen(t, server)

    const doc = await documentOf(base)
    const paths = Object.keys(doc.paths).sort()
    t.same(paths, order === 'before' ? ['/legacy', '/v2/users', '/v2/users/{id}'] : ['/v2/users', '/v2/users/{id}'],
      order === 'before' ? 'the Fastify route stays' : 'the Fastify route registered before @fastify/swagger is not in it, as always')
    t.notOk('/v2' in doc.paths, 'no catch-all at the mount point')
    t.notOk('/v2/{*}' in doc.paths, 'no catch-all below it')
    t.same(Object.keys(doc.paths['/v2/users/{id}']), ['get'])
    t.match(doc.paths['/v2/users/{id}'].get.parameters, [{ in: 'path', name: 'id', required: true }])
    t.match(doc.paths['/v2/users/{id}'].get.responses?.['200'].content?.['application/json'].schema, { $ref: '#/components/schemas/User' })
    t.same(Object.keys(doc.paths['/v2/users']), ['post'])
    t.match(doc.components?.schemas.User, { type: 'object', properties: { nick: { type: 'string', nullable: true } } })

    // The YAML form has them too (after the mount, it is written as JSON, which is YAML).
    const yaml = await (await get(`${base}/documentation/yaml`)).text()
    t.match(yaml, order === 'before' ? /^ {2}\/v2\/users\/\{id\}:$/m : /"\/v2\/users\/\{id\}": \{/)
    if (order === 'after') t.same(Object.keys((JSON.parse(yaml) as Doc).paths).sort(), ['/v2/users', '/v2/users/{id}'])

    // And the app serves them, as documented.
    const res = await get(`${base}/v2/users/7`)
    t.same(await res.json(), { id: '7', nick: null })
    t.equal((await get(`${base}/legacy`)).status, 200)
  })
}

t.test('without the option, the mount is out of the document; its routes carry no schema, so nothing changes for validation or serialization', { skip: swaggerRefused }, async (t) => {
  const app = new Hono<{ Bindings: FastifyHonoBindings }>()
  app.get('/route', (c) => c.json({
    schema: c.env.request.routeOptions.schema ?? null,
    swaggerTransform: typeof c.env.request.routeOptions.config.swaggerTransform
  }))
  const server = Fastify()
  await registerSwagger(server)
  server.get('/legacy', async () => 'legacy')
  await server.register(fastifyHono, { app, prefix: '/v2' })
  await server.register(fastifyHono, { app: new Hono() })
  const base = await listen(t, server)

  const doc = await documentOf(base)
  t.same(Object.keys(doc.paths), ['/legacy'], 'neither the mount under /v2 nor the one at the root')
  t.same(await (await get(`${base}/v2/route`)).json(), { schema: null, swaggerTransform: 'function' })
})

t.test('OpenAPI 3.1: openapi: true takes getOpenAPI31Document(); a function is called when the document is built, with its version', { skip: swaggerRefused }, async (t) => {
  const app = usersApp()
  const calls: unknown[] = []
  const logs = logCollector()
  const server = Fastify({ logger: { level: 'warn', stream: logs.stream } })
  const hook = { post: { responses: { 200: { description: 'ok' } } } }
  await registerSwagger(server, { openapi: '3.1.0', webhooks: { userDeleted: hook } })
  // A 3.0 document, its webhooks and Fastify's literal colon (`::`).
  await server.register(fastifyHono, {
    app: new Hono(),
    prefix: '/v1',
    openapi: { openapi: '3.0.3', paths: { '/a::b': { get: hook.post } }, webhooks: { userCreated: hook, userDeleted: { post: { responses: {} } } } }
  })
  await server.register(fastifyHono, { app, prefix: '/v2', openapi: true })
  await server.register(fastifyHono, {
    app,
    prefix: '/v3',
    openapi: (target) => {
      calls.push(target)
      return app.getOpenAPI31Document(target)
    }
  })
  // Added after registration: the document is made when it is first asked for.
  app.openapi(createRoute({ method: 'delete', path: '/users/{id}', request: { params: z.object({ id: z.string() }) }, responses: { 204: { description: 'deleted' } } }), (c) => c.body(null, 204))
  const base = await listen(t, server)

  const doc = await documentOf(base)
  t.equal(doc.openapi, '3.1.0')
  t.match(doc.components?.schemas.User, { properties: { nick: { type: ['string', 'null'] } } }, 'the 3.1 form of a nullable field')
  t.same(Object.keys(doc.paths['/v2/users/{id}']).sort(), ['delete', 'get'])
  t.same(Object.keys(doc.paths['/v3/users/{id}']).sort(), ['delete', 'get'])
  await documentOf(base)
  t.same(calls, [{ openapi: '3.1.0', info: INFO }], 'called once: @fastify/swagger keeps the document it built')

  t.ok('/v1/a:b' in doc.paths)
  t.same((doc as Doc & { webhooks: unknown }).webhooks, { userDeleted: hook, userCreated: hook }, "Fastify's webhook of the same name stays")
  t.same(logs.lines.filter((line) => line.level === 40).map((line) => line.msg), [
    "fastify-hono: the app's document is OpenAPI 3.0.3, @fastify/swagger's is 3.1.0: their schemas may not mean the same",
    "fastify-hono: webhook userDeleted is in Fastify's document already; Fastify's stays"
  ])
})

t.test('OpenAPI 3.0 has no webhooks: an app\'s are left out, with a warning', { skip: swaggerRefused }, async (t) => {
  const logs = logCollector()
  const server = Fastify({ logger: { level: 'warn', stream: logs.stream } })
  await registerSwagger(server)
  await server.register(fastifyHono, { app: new Hono(), openapi: { webhooks: { userCreated: { post: { responses: {} } } } } })
  const base = await listen(t, server)
  t.notOk('webhooks' in await documentOf(base))
  t.match(logs.lines.filter((line) => line.level === 40), [{ msg: "fastify-hono: OpenAPI 3.0 has no webhooks; the app's (userCreated) are left out" }])
})

t.test('a document given as is: Hono-style parameters and a prefix with a parameter become {name}', { skip: swaggerRefused }, async (t) => {
  const operation = { responses: { 200: { description: 'ok' } } }
  const document: OpenAPIDocument = {
    openapi: '3.0.3',
    paths: { '/': { get: operation }, '/items/:id{[0-9]+}': { get: operation }, '/files/:name?': { get: operation } }
  }
  const server = Fastify()
  await registerSwagger(server)
  await server.register(fastifyHono, { app: new Hono(), prefix: '/:tenant(^[a-z]+$)', openapi: document })
  await server.register(fastifyHono, { app: new Hono(), openapi: { paths: { '/': { get: operation }, '/about': { get: operation } } } })
  const base = await listen(t, server)

  const doc = await documentOf(base)
  t.same(Object.keys(doc.paths).sort(), ['/', '/about', '/{tenant}', '/{tenant}/files/{name}', '/{tenant}/items/{id}'])
  t.same(document.paths, { '/': { get: operation }, '/items/:id{[0-9]+}': { get: operation }, '/files/:name?': { get: operation } }, "the user's document is not changed")
})

t.test('stripPrefix: false: the paths of a basePath app are full already', { skip: swaggerRefused }, async (t) => {
  const app = new OpenAPIHono().basePath('/api/v1')
  app.openapi(createRoute({ method: 'get', path: '/items/{id}', request: { params: z.object({ id: z.string() }) }, responses: { 204: { description: 'none' } } }), (c) => c.body(null, 204))
  const server = Fastify()
  await registerSwagger(server)
  await server.register(fastifyHono, { app, prefix: '/api/v1', stripPrefix: false, openapi: true })
  const base = await listen(t, server)
  t.same(Object.keys((await documentOf(base)).paths), ['/api/v1/items/{id}'])
  t.equal((await get(`${base}/api/v1/items/3`)).status, 204)
})

t.test("name clashes: Fastify's operations, tags and differing components stay; the app's differing components are renamed, references and security following", { skip: swaggerRefused }, async (t) => {
  const logs = logCollector()
  const server = Fastify({ logger: { level: 'warn', stream: logs.stream } })
  await registerSwagger(server, {
    components: {
      schemas: { User: { type: 'object', properties: { login: { type: 'string' } } }, Shared: { type: 'string' } },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }
    },
    tags: [{ name: 'users', description: "Fastify's" }]
  })
  server.get('/v2/users/:id', { schema: { summary: 'the Fastify route' } }, async () => ({}))
  const document: OpenAPIDocument = {
    openapi: '3.0.3',
    security: [{ bearer: [] }],
    tags: [{ name: 'users' }, { name: 'items' }],
    components: {
      schemas: {
        User: { type: 'object', properties: { id: { type: 'string' } } },
        Users: { type: 'array', items: { $ref: '#/components/schemas/User' } },
        Shared: { type: 'string' }
      },
      securitySchemes: { bearer: { type: 'apiKey', in: 'header', name: 'x-token' } }
    },
    paths: {
      '/users/{id}': {
        get: { summary: 'the Hono route', responses: { 200: { description: 'a user', content: { 'application/json': { schema: { $ref: '#/components/schemas/User' } } } } } },
        post: { summary: 'only in Hono', security: [], responses: { 200: { description: 'ok' } } }
      },
      '/users': { get: { responses: { 200: { description: 'users', content: { 'application/json': { schema: { $ref: '#/components/schemas/Users' } } } } } } }
    }
  }
  await server.register(fastifyHono, { app: new Hono(), prefix: '/v2', openapi: document })
  const base = await listen(t, server)

  const doc = await documentOf(base)
  const schemas = doc.components?.schemas ?? {}
  t.same(Object.keys(schemas).sort(), ['Shared', 'User', 'User_2', 'Users'], 'an identical component is shared, a differing one renamed')
  t.same(schemas.User, { type: 'object', properties: { login: { type: 'string' } } }, "Fastify's User stays")
  t.same(schemas.User_2, { type: 'object', properties: { id: { type: 'string' } } })
  t.same(schemas.Users, { type: 'array', items: { $ref: '#/components/schemas/User_2' } }, "the app's references follow the renaming")
  t.same(Object.keys(doc.components?.securitySchemes ?? {}).sort(), ['bearer', 'bearer_2'])

  t.equal(doc.paths['/v2/users/{id}'].get.summary, 'the Fastify route', "Fastify's route answers GET, so its operation stays")
  t.equal(doc.paths['/v2/users/{id}'].post.summary, 'only in Hono')
  t.same(doc.paths['/v2/users/{id}'].post.security, [], "an operation's own security stays")
  t.same(doc.paths['/v2/users'].get.security, [{ bearer_2: [] }], "the app's top-level security applies to its operations, renamed")
  t.same(doc.tags, [{ name: 'users', description: "Fastify's" }, { name: 'items' }])

  const warnings = logs.lines.filter((line) => line.level === 40).map((line) => line.msg)
  t.same(warnings.sort(), [
    'fastify-hono: GET /v2/users/{id} is in Fastify\'s document already; Fastify\'s route answers it, and its operation stays',
    'fastify-hono: components.schemas.User differs from Fastify\'s; the app\'s is added as User_2',
    'fastify-hono: components.securitySchemes.bearer differs from Fastify\'s; the app\'s is added as bearer_2'
  ])
  t.same(document.components, {
    schemas: {
      User: { type: 'object', properties: { id: { type: 'string' } } },
      Users: { type: 'array', items: { $ref: '#/components/schemas/User' } },
      Shared: { type: 'string' }
    },
    securitySchemes: { bearer: { type: 'apiKey', in: 'header', name: 'x-token' } }
  }, "the user's document is not changed")
})

t.test('Swagger 2.0: the mount stays out, and the app\'s OpenAPI 3 document is left out with a warning', { skip: swaggerRefused }, async (t) => {
  const logs = logCollector()
  const server = Fastify({ logger: { level: 'warn', stream: logs.stream } })
  await server.register(fastifySwagger, { swagger: { info: INFO } })
  server.get('/legacy', async () => 'legacy')
  await server.register(fastifyHono, { app: usersApp(), prefix: '/v2', openapi: true })
  await server.ready()
  t.teardown(() => server.close())
  const doc = server.swagger() as unknown as { swagger: string, paths: Record<string, unknown> }
  t.equal(doc.swagger, '2.0')
  t.same(Object.keys(doc.paths), ['/legacy'])
  t.match(logs.lines.filter((line) => line.level === 40), [{ msg: /Swagger 2\.0 document, which cannot include the app's OpenAPI 3 document/ }])
})

t.test('invalid openapi values fail registration with FST_ERR_HONO_INVALID_OPTION, naming the option', async (t) => {
  const cases: Array<[string, unknown, unknown, RegExp]> = [
    ['a string', new Hono(), 'yes', /option "openapi" must be an OpenAPI 3 document, a function that returns one, or true, got string "yes"/],
    ['null', new Hono(), null, /option "openapi" must be an OpenAPI 3 document.*got null/],
    ['an array', new Hono(), [], /option "openapi" must be an OpenAPI 3 document.*got an array/],
    ['a Swagger 2.0 document', new Hono(), { swagger: '2.0', paths: {} }, /option "openapi" must be an OpenAPI 3 document, got a Swagger 2\.0 one/],
    ['another version', new Hono(), { openapi: '2.0' }, /option "openapi" must be an OpenAPI 3 document, got openapi "2\.0"/],
    ['paths not an object', new Hono(), { paths: [] }, /option "openapi" must have paths as an object, got an array/],
    ['components not an object', new Hono(), { components: 'x' }, /option "openapi" must have components as an object/],
    ['tags not an array', new Hono(), { tags: {} }, /option "openapi" must have tags as an array/],
    ['true for an app that cannot describe itself', new Hono(), true, /option "openapi" is true, but the app has no getOpenAPIDocument\(\)/]
  ]
  for (const [name, app, openapi, message] of cases) {
    const server = Fastify()
    server.register(fastifyHono, { app, openapi } as never)
    await t.rejects(server.ready(), { code: 'FST_ERR_HONO_INVALID_OPTION', message }, name)
  }

  // A function's result is checked when @fastify/swagger asks for it.
  await t.test('a function\'s result', { skip: swaggerRefused }, async (t) => {
    const server = Fastify()
    await registerSwagger(server)
    await server.register(fastifyHono, { app: new Hono(), prefix: '/v2', openapi: () => ({ paths: 'none' }) as never })
    const base = await listen(t, server)
    const res = await get(`${base}/documentation/json`)
    t.equal(res.status, 500)
    t.match(await res.json(), { code: 'FST_ERR_HONO_INVALID_OPTION', message: /option "openapi" returned a value that must have paths as an object, got string "none"/ })
  })
})
