// A long-lived server keeps its speed: V8 keeps the objects every request
// meets in fast mode. In some server processes, every ServerResponse after the
// first few cold requests went into dictionary mode, at 1.4–2.2× the cost per
// request (bench/results/2026-12-01-ab-restructure.md), and which change cured
// it was never found. This test meets a server the way a real one is met:
// every way out once, cold, on a fresh connection each, then the same
// requests again on kept-alive connections, over HTTP/1.1 and HTTP/2; then it
// asks V8 itself (%HasFastProperties, under --allow-natives-syntax, in the
// server's own process) about the IncomingMessage, ServerResponse, Request,
// Response and Headers objects of those later requests. A route that deletes
// a property of its ServerResponse is the negative control: the check must
// call that one slow.
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { Agent, request as httpRequest } from 'node:http'
import { connect as connectHttp2, type ClientHttp2Session } from 'node:http2'
import { join } from 'node:path'
import { test } from 'tap'

interface Counts { fast: number, slow: number }
interface Report { tally: Record<string, Record<string, Counts>>, ways: Record<string, string[]>, requests: number }

/** Every way out, as [method, path]: the fast writer, the stream writer, after onSend hooks, reply.send, an error answer, HEAD, 204. */
const HTTP1: Array<[string, string]> = [
  ['GET', '/h/text'],
  ['GET', '/h/json'],
  ['GET', '/h/stream'],
  ['GET', '/hooked/text'],
  ['GET', '/hooked/stream'],
  ['GET', '/h/send'],
  ['GET', '/h/error'],
  ['HEAD', '/h/text'],
  ['GET', '/h/empty'],
  ['GET', '/h/control']
]
const HTTP2: Array<[string, string]> = [
  ['GET', '/h/text'],
  ['GET', '/h/stream'],
  ['GET', '/hooked/text'],
  ['GET', '/h/error']
]
const ROUNDS = 40

function http1 (port: number, method: string, path: string, { agent, phase }: { agent?: Agent, phase: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'x-phase': phase }
    if (agent === undefined) headers.connection = 'close'
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: agent ?? false }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
      res.on('error', reject)
    })
    req.setTimeout(5000, () => req.destroy(new Error(`${method} ${path} timed out`)))
    req.on('error', reject)
    req.end()
  })
}

function http2 (session: ClientHttp2Session, method: string, path: string, phase: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': method, ':path': path, 'x-phase': phase })
    let status = 0
    stream.on('response', (headers) => { status = Number(headers[':status']) })
    stream.resume()
    stream.on('end', () => resolve(status))
    stream.on('error', reject)
    stream.setTimeout(5000, () => stream.close())
    stream.end()
  })
}

async function session (port: number): Promise<ClientHttp2Session> {
  const client = connectHttp2(`http://127.0.0.1:${port}`)
  await once(client, 'connect')
  return client
}

async function close (client: ClientHttp2Session): Promise<void> {
  if (client.closed) return
  await new Promise<void>((resolve) => client.close(() => resolve()))
}

const statuses: Record<string, number> = { '/h/error': 500, '/h/empty': 204 }

for (const logMode of ['none', 'debug'] as const) {
  test(`the objects of later requests keep fast properties (logger: ${logMode})`, async (t) => {
    const child = fork(join(__dirname, 'fixtures', 'fast-properties-server.mjs'), [logMode], {
      execArgv: ['--allow-natives-syntax'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc']
    })
    t.teardown(() => { child.kill() })
    const [{ port, http2Port }] = await once(child, 'message') as [{ port: number, http2Port: number }]

    // Cold: each way once, on a connection of its own, as probes meet a new server.
    for (const [method, path] of HTTP1) t.equal(await http1(port, method, path, { phase: 'cold' }), statuses[path] ?? 200, `cold ${method} ${path}`)
    for (const [method, path] of HTTP2) {
      const client = await session(http2Port)
      t.equal(await http2(client, method, path, 'cold'), statuses[path] ?? 200, `cold HTTP/2 ${method} ${path}`)
      await close(client)
    }

    // Later: the same requests, round after round, on kept-alive connections.
    const agent = new Agent({ keepAlive: true, maxSockets: 2 })
    t.teardown(() => agent.destroy())
    const client = await session(http2Port)
    t.teardown(() => client.destroy())
    const wrong: string[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all([
        ...HTTP1.map(async ([method, path]) => [`${method} ${path}`, await http1(port, method, path, { agent, phase: 'later' }), statuses[path] ?? 200] as const),
        ...HTTP2.map(async ([method, path]) => [`HTTP/2 ${method} ${path}`, await http2(client, method, path, 'later'), statuses[path] ?? 200] as const)
      ])
      for (const [name, status, expected] of answers) if (status !== expected) wrong.push(`${name}: ${status}`)
    }
    t.same(wrong, [], 'every later request answered as expected')
    await close(client)
    agent.destroy()

    child.send('check')
    const [report] = await once(child, 'message') as [Report]
    await once(child, 'exit')

    // The negative control: V8's check does see a ServerResponse in dictionary mode.
    t.same(report.tally['GET /h/control']?.ServerResponse, { fast: 0, slow: ROUNDS }, 'the control\'s ServerResponse (a property deleted) is slow')

    const expectedKinds = [
      ...HTTP1.filter(([, path]) => path !== '/h/error').map(([method, path]) => `${method} ${path}`),
      ...HTTP2.filter(([, path]) => path !== '/h/error').map(([method, path]) => `${method} ${path} (HTTP/2)`)
    ]
    for (const kind of expectedKinds) t.ok(report.tally[kind] !== undefined, `${kind}: the app saw later requests`)
    t.ok(report.tally['GET /h/error'] !== undefined, 'GET /h/error: the app saw later requests')
    t.ok(report.tally['GET /h/error (HTTP/2)'] !== undefined, 'GET /h/error (HTTP/2): the app saw later requests')

    const slow: string[] = []
    let checked = 0
    for (const [kind, objects] of Object.entries(report.tally)) {
      for (const [name, counts] of Object.entries(objects)) {
        if (kind === 'GET /h/control' && name === 'ServerResponse') continue
        checked += counts.fast + counts.slow
        if (counts.slow > 0) slow.push(`${kind}: ${name}, ${counts.slow} of ${counts.fast + counts.slow} in dictionary mode`)
      }
    }
    t.same(slow, [], `every IncomingMessage, ServerResponse, Request, Response and Headers of the later requests has fast properties (${checked} objects)`)
    for (const name of ['IncomingMessage', 'ServerResponse', 'Request', 'Request headers', 'Response', 'Response headers']) {
      t.ok(Object.values(report.tally).some((objects) => (objects[name]?.fast ?? 0) > 0), `${name}: checked`)
    }

    if (logMode === 'debug') {
      // Each way out was taken: the plugin's own debug line says which.
      t.match(report.ways, {
        'GET /h/text': ['fast writer'],
        'GET /h/json': ['fast writer'],
        'GET /h/stream': ['stream writer'],
        'GET /hooked/text, after 1 onSend hook': ['fast writer'],
        'GET /hooked/stream, after 1 onSend hook': ['stream writer'],
        'GET /h/send': ['reply.send'],
        'HEAD /h/text': ['fast writer'],
        'GET /h/empty': ['fast writer'],
        'GET /h/text (HTTP/2)': ['reply.send'],
        'GET /h/stream (HTTP/2)': ['stream writer']
      }, 'the ways out, as the plugin logs them')
    }
  })
}
