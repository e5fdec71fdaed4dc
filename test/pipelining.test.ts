import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { cors } from 'hono/cors'
import { stream } from 'hono/streaming'
import fastifyHono from 'fastify-hono'
import { listen, parseResponses, rawExchange } from './helpers/net'
import { seeded } from './helpers/random'

// 1,000 requests pipelined on one keep-alive connection, of every kind the
// writers handle: a wrong or stale Content-Length anywhere desynchronizes
// the connection, and every later response would fail to parse or match.
const body = (i: number, size: number): string => `#${i}:`.padEnd(Math.max(size, String(i).length + 2), 'é')

function app (): Hono {
  const hono = new Hono()
  hono.use('/mw/*', cors({ origin: '*' }), async (c, next) => { await next(); c.header('x-mw', '1') })
  hono.get('/text/:i/:size', (c) => c.text(body(Number(c.req.param('i')), Number(c.req.param('size')))))
  hono.get('/mw/:i/:size', (c) => c.text(body(Number(c.req.param('i')), Number(c.req.param('size')))))
  hono.get('/json/:i', (c) => c.json({ i: Number(c.req.param('i')) }))
  hono.get('/bytes/:i/:size', (c) => c.body(new TextEncoder().encode(body(Number(c.req.param('i')), Number(c.req.param('size'))))))
  hono.get('/empty/:i', (c) => c.body(null, 204))
  hono.get('/not-modified/:i', (c) => c.body(null, 304))
  hono.get('/stream/:i', (c) => stream(c, async (s) => {
    await s.write(`#${c.req.param('i')}:`)
    await s.write('streamed')
  }))
  hono.post('/echo/:i', async (c) => c.text(`#${c.req.param('i')}:` + await c.req.text()))
  return hono
}

test('1,000 pipelined requests: every response framed correctly and matching its request', async (t) => {
  const server = Fastify({ logger: false })
  await server.register(fastifyHono, { app: app(), prefix: '/p' })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  const random = seeded(0xfa57)
  const methods: string[] = []
  const expected: Array<{ status: number, body?: string, length?: number }> = []
  let wire = ''
  for (let i = 0; i < 1000; i++) {
    const pick = random()
    const size = [1, 13, 100, 1000, 20_000][Math.floor(random() * 5)]
    const last = i === 999 ? 'Connection: close\r\n' : ''
    let method = 'GET'
    let target: string
    let extra = ''
    if (pick < 0.2) {
      target = `/p/text/${i}/${size}`
      expected.push({ status: 200, body: body(i, size) })
    } else if (pick < 0.35) {
      target = `/p/mw/${i}/${size}`
      expected.push({ status: 200, body: body(i, size) })
    } else if (pick < 0.45) {
      target = `/p/json/${i}`
      expected.push({ status: 200, body: JSON.stringify({ i }) })
    } else if (pick < 0.55) {
      target = `/p/bytes/${i}/${size}`
      expected.push({ status: 200, body: body(i, size) })
    } else if (pick < 0.7) {
      method = 'HEAD'
      target = random() < 0.5 ? `/p/text/${i}/${size}` : `/p/mw/${i}/${size}`
      expected.push({ status: 200, body: '', length: Buffer.byteLength(body(i, size)) })
    } else if (pick < 0.76) {
      target = `/p/empty/${i}`
      expected.push({ status: 204, body: '' })
    } else if (pick < 0.8) {
      target = `/p/not-modified/${i}`
      expected.push({ status: 304, body: '' })
    } else if (pick < 0.9) {
      target = `/p/stream/${i}`
      expected.push({ status: 200, body: `#${i}:streamed` })
    } else {
      method = 'POST'
      target = `/p/echo/${i}`
      const payload = 'ü'.repeat(size % 500)
      extra = `Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n`
      expected.push({ status: 200, body: `#${i}:` + payload })
      wire += `${method} ${target} HTTP/1.1\r\nHost: x\r\n${extra}${last}\r\n${payload}`
      methods.push(method)
      continue
    }
    methods.push(method)
    wire += `${method} ${target} HTTP/1.1\r\nHost: x\r\n${extra}${last}\r\n`
  }

  const raw = await rawExchange(port, Buffer.from(wire), { timeout: 30_000 })
  const responses = parseResponses(raw, methods)
  t.equal(responses.length, 1000, 'a response for each request, and nothing else on the wire')
  let mismatches = 0
  for (let i = 0; i < 1000; i++) {
    const got = responses[i]
    const want = expected[i]
    const text = Buffer.from(got.body, 'latin1').toString('utf8')
    const ok = got.status === want.status && text === want.body &&
      (want.length === undefined || got.headers['content-length']?.[0] === String(want.length))
    if (!ok) {
      mismatches++
      if (mismatches <= 5) t.fail(`response ${i} (${methods[i]}): status ${got.status}, ${JSON.stringify(text.slice(0, 40))}, length ${got.headers['content-length']?.[0]}; wanted ${JSON.stringify(want)}`)
    }
  }
  t.equal(mismatches, 0, 'every response matches its request')
})
