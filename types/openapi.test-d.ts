// Type-level tests of the openapi option: the documents of @hono/zod-openapi
// fit it as they are, and the function form's argument fits its config.
import Fastify from 'fastify'
import { Hono } from 'hono'
import { OpenAPIHono } from '@hono/zod-openapi'
import fastifyHono, { type OpenAPIDocument, type OpenAPITarget } from 'fastify-hono'

const server = Fastify()
const app = new OpenAPIHono()

server.register(fastifyHono, { app, openapi: true })
server.register(fastifyHono, { app, openapi: false })
server.register(fastifyHono, { app, openapi: app.getOpenAPIDocument({ openapi: '3.0.3', info: { title: 'api', version: '1' } }) })
server.register(fastifyHono, { app, openapi: (target) => app.getOpenAPI31Document(target) })
server.register(fastifyHono, { app, openapi: (target: OpenAPITarget) => app.getOpenAPIDocument({ ...target, info: { ...target.info, description: 'moved' } }) })

const literal: OpenAPIDocument = { openapi: '3.0.3', paths: { '/users/{id}': { get: { responses: { 200: { description: 'ok' } } } } } }
server.register(fastifyHono, { app: new Hono(), openapi: literal })

// @ts-expect-error: a document, a function that returns one, or a boolean
server.register(fastifyHono, { app, openapi: 'yes' })
// @ts-expect-error: the function returns a document
server.register(fastifyHono, { app, openapi: () => 'yes' })
