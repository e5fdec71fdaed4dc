// A typed Hono API with validation (@hono/zod-validator), mounted at /api,
// and the Hono RPC client calling it. The client's base URL includes the
// prefix: the app's routes are written relative to the mount point, and
// `hc` appends them to the base URL. In TypeScript, `hc<typeof api>(…)` gives
// typed calls and typed responses (see types/rpc.test-d.ts); this file is
// plain JavaScript so that it runs with `node` alone.
//
//   node examples/rpc.mjs
import { pathToFileURL } from 'node:url'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { hc } from 'hono/client'
import { zValidator } from '@hono/zod-validator'
import { z } from 'zod'
import fastifyHono from 'fastify-hono'

const newTodo = z.object({
  title: z.string().min(1).max(200),
  done: z.boolean().default(false)
})
const todoId = z.object({ id: z.coerce.number().int().positive() })

/** Answers 400 with the validation issues instead of the raw zod result. */
function invalid (result, c) {
  if (!result.success) {
    return c.json({ error: `invalid ${result.target}`, issues: result.error.issues.map((i) => ({ path: i.path, message: i.message })) }, 400)
  }
}

/**
 * Chained, so that in TypeScript `typeof` the result carries every route's
 * input and output types for the client.
 */
export function createApi () {
  const todos = new Map()
  let nextId = 1
  return new Hono()
    .get('/todos', (c) => c.json({ todos: [...todos.values()] }))
    .post('/todos', zValidator('json', newTodo, invalid), (c) => {
      const todo = { id: nextId++, ...c.req.valid('json') }
      todos.set(todo.id, todo)
      return c.json(todo, 201)
    })
    .get('/todos/:id', zValidator('param', todoId, invalid), (c) => {
      const todo = todos.get(c.req.valid('param').id)
      if (todo === undefined) return c.json({ error: 'no such todo' }, 404)
      return c.json(todo, 200)
    })
}

export async function build (options = {}) {
  const server = Fastify({ logger: options.logger ?? false })
  await server.register(fastifyHono, { app: createApi(), prefix: '/api' })
  return server
}

/** The RPC client for a server at `origin`: the prefix is part of the base URL. */
export function createClient (origin) {
  return hc(`${origin}/api`)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = await build({ logger: true })
  await server.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
  const base = `http://${process.env.HOST ?? '127.0.0.1'}:${server.server.address().port}`
  const client = createClient(base)
  const created = await client.todos.$post({ json: { title: 'try the RPC client' } })
  console.log('POST /api/todos via hc:', created.status, await created.json())
  const fetched = await client.todos[':id'].$get({ param: { id: '1' } })
  console.log('GET /api/todos/1 via hc:', fetched.status, await fetched.json())
  console.log(`rpc example listening on ${base}
  curl ${base}/api/todos
  curl -X POST -H 'content-type: application/json' -d '{"title":""}' ${base}/api/todos   # 400`)
}
