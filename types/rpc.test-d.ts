// Type-level tests of the Hono RPC client through a mount: the app is
// registered under a prefix, and `hc<typeof app>` is pointed at a base URL
// that includes that prefix. `npm run test:types` compiles this file; a line
// under @ts-expect-error must fail to compile.
import Fastify from 'fastify'
import { Hono } from 'hono'
import { hc, type InferRequestType, type InferResponseType } from 'hono/client'
import { zValidator } from '@hono/zod-validator'
import { z } from 'zod'
import fastifyHono, { type FastifyHonoBindings } from 'fastify-hono'

// Marks values as used; the checks are the annotations where they are declared.
function use (...values: unknown[]): void {}

const newTodo = z.object({ title: z.string().min(1), done: z.boolean().optional() })

// Chained, so that `typeof app` carries every route's schema.
const app = new Hono<{ Bindings: FastifyHonoBindings }>()
  .get('/todos', (c) => c.json({ todos: [{ id: 1, title: 'a', done: false }], requestId: c.env.request.id }))
  .post('/todos', zValidator('json', newTodo), (c) => {
    const body = c.req.valid('json')
    const title: string = body.title
    const done: boolean | undefined = body.done
    return c.json({ id: 2, title, done: done ?? false }, 201)
  })
  .get('/todos/:id', (c) => {
    const id = Number(c.req.param('id'))
    if (Number.isNaN(id)) return c.json({ error: 'bad id' }, 400)
    return c.json({ id, title: 'a', done: false }, 200)
  })

// The typed app is an app the plugin accepts.
const server = Fastify()
server.register(fastifyHono, { app, prefix: '/api' })

// The base URL includes the prefix: `/todos` is resolved against it.
const client = hc<typeof app>('http://host/api')

export async function typedCalls (): Promise<void> {
  const list = await client.todos.$get()
  const listed = await list.json()
  const firstTitle: string = listed.todos[0].title
  const requestId: string = listed.requestId
  use(firstTitle, requestId)

  const created = await client.todos.$post({ json: { title: 'write the docs' } })
  if (created.status === 201) {
    const todo = await created.json()
    const id: number = todo.id
    const done: boolean = todo.done
    use(id, done)
  }

  const one = await client.todos[':id'].$get({ param: { id: '1' } })
  if (one.ok) {
    const todo = await one.json()
    const title: string = todo.title
    use(title)
    // @ts-expect-error: a 200 from this route has no `error`
    use(todo.error)
  } else {
    const failed = await one.json()
    const error: string = failed.error
    use(error)
  }

  // @ts-expect-error: the body is validated: title must be a string
  await client.todos.$post({ json: { title: 42 } })
  // @ts-expect-error: the json body is required
  await client.todos.$post({})
  // @ts-expect-error: the path parameter is required
  await client.todos[':id'].$get({})
  // @ts-expect-error: no such route in the app
  await client.users.$get()
  // @ts-expect-error: /todos has no DELETE
  await client.todos.$delete()
}

// The URL helper resolves against the base URL, prefix included.
const url: URL = client.todos[':id'].$url({ param: { id: '7' } })
use(url)

// Request and response types can be inferred from the client.
type CreateInput = InferRequestType<typeof client.todos.$post>['json']
const input: CreateInput = { title: 'inferred' }
use(input)
// @ts-expect-error: `title` is required in the inferred input
const missing: CreateInput = { done: true }
use(missing)
type Created = InferResponseType<typeof client.todos.$post, 201>
const created: Created = { id: 1, title: 'x', done: true }
use(created)

// The same app type describes the mount, whatever the prefix: a client built
// without the prefix compiles too, but calls the wrong URLs at run time, so
// the prefix belongs in the base URL.
const wrongBase = hc<typeof app>('http://host')
use(wrongBase)
