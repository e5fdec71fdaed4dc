// Helpers for the compatibility and example tests: real servers on real
// sockets, with every wait bounded.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'

/** The part of tap's `t` these helpers use. */
export interface Teardown {
  teardown (fn: () => unknown): void
}

/** How long any single request in these tests may take. */
export const REQUEST_TIMEOUT_MS = 5000

/**
 * Starts the server on an ephemeral loopback port, closes it (and every
 * connection still open) when the test ends, and returns its base URL
 * (`http://127.0.0.1:PORT`).
 */
export async function listen (t: Teardown, server: FastifyInstance): Promise<string> {
  t.teardown(async () => {
    // Connections still busy (a test that found a stuck one) would keep
    // close() waiting: end them all first.
    server.server.closeAllConnections()
    await server.close()
  })
  await server.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.server.address() as AddressInfo
  return `http://127.0.0.1:${port}`
}

/** `fetch` with a timeout, so a hung response fails the test instead of stalling it. */
export function fetchWithTimeout (url: string, init: RequestInit = {}, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Response> {
  return fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(timeoutMs) })
}

export interface RawResponse {
  status: number
  statusMessage: string
  headers: IncomingHttpHeaders
  /** The body bytes exactly as they came off the socket (no decompression). */
  body: Buffer
  /** Each `data` event: when it came (ms after the request was sent) and its bytes. */
  chunks: Array<{ at: number, data: Buffer }>
}

export interface RawRequestOptions {
  method?: string
  headers?: Record<string, string>
  body?: string | Buffer
  timeoutMs?: number
}

/**
 * A request through node:http rather than fetch: nothing is added
 * (fetch adds Accept-Encoding and decompresses), the body comes back as raw
 * bytes, and chunk arrival times are kept.
 */
export function rawRequest (url: string, options: RawRequestOptions = {}): Promise<RawResponse> {
  const { method = 'GET', headers = {}, body, timeoutMs = REQUEST_TIMEOUT_MS } = options
  return new Promise((resolve, reject) => {
    const started = Date.now()
    // The path goes out exactly as written: `new URL` would resolve `..` and
    // normalize escapes before the server could see them.
    const match = /^(https?:\/\/[^/?#]+)(.*)$/.exec(url)
    if (match === null) throw new TypeError(`not an absolute URL: ${url}`)
    const origin = new URL(match[1])
    const path = match[2] === '' ? '/' : match[2]
    const req = httpRequest({ hostname: origin.hostname, port: origin.port, path, method, headers, agent: false }, (res) => {
      const chunks: RawResponse['chunks'] = []
      res.on('data', (data: Buffer) => chunks.push({ at: Date.now() - started, data }))
      res.on('error', reject)
      res.on('end', () => {
        clearTimeout(timer)
        resolve({
          status: res.statusCode ?? 0,
          statusMessage: res.statusMessage ?? '',
          headers: res.headers,
          body: Buffer.concat(chunks.map((chunk) => chunk.data)),
          chunks
        })
      })
    })
    const timer = setTimeout(() => {
      req.destroy(new Error(`${method} ${url} took longer than ${timeoutMs} ms`))
    }, timeoutMs)
    req.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    req.end(body)
  })
}

export interface ServerSentEvent {
  event?: string
  data: string
  id?: string
  /** ms after `readEvents` started that the chunk carrying this event arrived. */
  at: number
  /** Which read() of the body delivered it (0-based). */
  read: number
}

/**
 * Reads server-sent events from a fetch body as they arrive, calling
 * `onEvent` for each; resolves when the stream ends or `onEvent` returns
 * false (the reader is then cancelled). Rejects after `timeoutMs`.
 */
export async function readEvents (
  body: ReadableStream<Uint8Array>,
  onEvent: (event: ServerSentEvent) => boolean | void,
  timeoutMs = REQUEST_TIMEOUT_MS
): Promise<{ ended: boolean }> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const started = Date.now()
  let buffer = ''
  let reads = 0
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no end of the event stream within ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), timeout])
      if (done) return { ended: true }
      const read = reads++
      const at = Date.now() - started
      buffer += decoder.decode(value, { stream: true })
      let boundary: number
      while ((boundary = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, boundary)
        buffer = buffer.slice(boundary + 2)
        const event: ServerSentEvent = { data: '', at, read }
        const data: string[] = []
        for (const line of block.split('\n')) {
          const colon = line.indexOf(':')
          const field = colon === -1 ? line : line.slice(0, colon)
          const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
          if (field === 'data') data.push(value)
          else if (field === 'event') event.event = value
          else if (field === 'id') event.id = value
        }
        event.data = data.join('\n')
        if (onEvent(event) === false) {
          await reader.cancel()
          return { ended: false }
        }
      }
    }
  } finally {
    clearTimeout(timer)
  }
}

/** A log destination for `Fastify({ logger: { stream } })` that keeps each JSON line. */
export function logCollector (): { stream: Writable, lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>)
      }
      callback()
    }
  })
  return { stream, lines }
}

/** Waits until `check()` is true, polling every few ms; rejects after `timeoutMs`. */
export async function waitFor (check: () => boolean, what: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

export interface PipelinedResult {
  /** The status of each response that came back, in order. */
  statuses: number[]
  /** The first response said `Connection: close`. */
  firstSaidClose: boolean
  /** The server closed the connection. */
  closed: boolean
}

/**
 * Sends a request with a body and then, on the same connection, a GET for
 * `nextPath`, both written at once, and collects the responses until both
 * have come back, the server closes the connection, or `waitMs` passes.
 * Tells whether a connection survives a request whose body the server did
 * not (fully) read.
 */
export function pipelined (base: string, first: { method: string, path: string, headers?: Record<string, string>, body: Buffer }, nextPath: string, waitMs = 1500): Promise<PipelinedResult> {
  const { hostname, port } = new URL(base)
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname)
    let data = ''
    let closed = false
    const done = (): void => {
      clearTimeout(timer)
      socket.destroy()
      const statuses = [...data.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]))
      const firstHead = data.split('\r\n\r\n')[0]
      resolve({ statuses, firstSaidClose: /\r\nconnection: close\r\n/i.test(firstHead + '\r\n'), closed })
    }
    const timer = setTimeout(done, waitMs)
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString('latin1')
      if ((data.match(/HTTP\/1\.1 \d{3} /g) ?? []).length >= 2) setTimeout(done, 20)
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      closed = true
      done()
    })
    // Header names in lower case.
    const headers: Record<string, string> = { host: `${hostname}:${port}`, ...first.headers }
    const chunked = headers['transfer-encoding'] === 'chunked'
    if (!chunked) headers['content-length'] = String(first.body.length)
    const head = `${first.method} ${first.path} HTTP/1.1\r\n` + Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') + '\r\n'
    socket.write(head)
    if (chunked) {
      socket.write(first.body.length.toString(16) + '\r\n')
      socket.write(first.body)
      socket.write('\r\n0\r\n\r\n')
    } else {
      socket.write(first.body)
    }
    socket.write(`GET ${nextPath} HTTP/1.1\r\nhost: ${hostname}:${port}\r\n\r\n`)
  })
}
