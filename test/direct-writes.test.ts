import { test } from 'tap'
import { Writable } from 'node:stream'
import type { ServerResponse } from 'node:http'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response'
import fastifyHono, { type FastifyHonoBindings } from 'fastify-hono'
import { listen, parseResponses, rawExchange } from './helpers/net'

// An app that writes c.env.outgoing itself and returns @hono/node-server's
// RESPONSE_ALREADY_SENT: the request ends cleanly, with no "Reply was
// already sent" warning, and Fastify's onResponse hooks and request log run
// once, when the app's response finishes.

test('RESPONSE_ALREADY_SENT: the app writes the response; Fastify logs it once, and warns of nothing', async (t) => {
  const lines: Array<{ level: number, msg: string, req?: { url: string }, reqId?: string }> = []
  const stream = new Writable({
    write (chunk, _encoding, callback) {
      for (const text of chunk.toString().split('\n')) if (text !== '') lines.push(JSON.parse(text))
      callback()
    }
  })
  const app = new Hono<{ Bindings: FastifyHonoBindings }>()
  app.get('/now', (c) => {
    const out = c.env.outgoing as ServerResponse
    out.writeHead(201, { 'content-type': 'text/plain', 'x-direct': 'yes' })
    out.end('written directly')
    return RESPONSE_ALREADY_SENT
  })
  app.get('/later', (c) => {
    const out = c.env.outgoing as ServerResponse
    out.writeHead(200, { 'content-type': 'text/plain' })
    out.write('first, ')
    setTimeout(() => out.end('then later'), 50)
    return RESPONSE_ALREADY_SENT
  })
  app.get('/async', async (c) => {
    await new Promise((resolve) => setTimeout(resolve, 10))
    const out = c.env.outgoing as ServerResponse
    out.writeHead(202, { 'content-length': '5' })
    out.end('async')
    return RESPONSE_ALREADY_SENT
  })
  const server = Fastify({ logger: { level: 'info', stream } })
  const responses: string[] = []
  server.addHook('onResponse', async (request) => { responses.push(request.url) })
  await server.register(fastifyHono, { app, prefix: '/m' })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  const wire = await rawExchange(port, 'GET /m/now HTTP/1.1\r\nHost: x\r\n\r\nGET /m/later HTTP/1.1\r\nHost: x\r\n\r\nGET /m/async HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  const [now, later, async] = parseResponses(wire, ['GET', 'GET', 'GET'])
  t.equal(now.status, 201)
  t.same(now.headers['x-direct'], ['yes'])
  t.equal(now.body, 'written directly')
  t.equal(later.body, 'first, then later', 'the app may finish the response after returning')
  t.equal(async.status, 202)
  t.equal(async.body, 'async')
  await new Promise((resolve) => setTimeout(resolve, 50))

  t.same(responses, ['/m/now', '/m/later', '/m/async'], 'onResponse ran once per request')
  const completed = lines.filter((l) => l.msg === 'request completed')
  t.equal(completed.length, 3, 'one "request completed" line each')
  t.same(lines.filter((l) => l.level >= 40), [], 'no warning or error (no "Reply was already sent")')
})
