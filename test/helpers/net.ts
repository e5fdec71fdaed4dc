// Wire-level helpers: what a real client sees, including the Content-Length
// that Node serializes itself (fastify.inject cannot show it).
import { connect } from 'node:net'
import { connect as connectHttp2, type IncomingHttpHeaders } from 'node:http2'
import type { FastifyInstance } from 'fastify'

export async function listen (server: FastifyInstance): Promise<{ port: number, base: string }> {
  await server.listen({ port: 0, host: '127.0.0.1' })
  const address = server.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return { port: address.port, base: `http://127.0.0.1:${address.port}` }
}

/** Sends raw bytes and resolves with everything received until the server closes. */
export function rawExchange (port: number, request: string | Buffer, { timeout = 5000 } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect(port, '127.0.0.1', () => { socket.write(request) })
    const timer = setTimeout(() => { socket.destroy(); reject(new Error('raw exchange timed out: ' + Buffer.concat(chunks).toString('latin1'))) }, timeout)
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('end', () => { clearTimeout(timer); resolve(Buffer.concat(chunks).toString('latin1')) })
    socket.on('error', (err) => { clearTimeout(timer); reject(err) })
  })
}

export interface WireResponse {
  status: number
  reason: string
  headers: Record<string, string[]>
  /** Header lines in order, as sent. */
  rawHeaders: string[]
  framing: 'content-length' | 'chunked' | 'close' | 'none'
  body: string
}

/**
 * Parses one or more HTTP/1.x responses from a byte string, framing each the
 * way a client must (RFC 9112 §6.3), so a wrong length shows as a parse error
 * or as garbage in the next response. `methods` gives each response's
 * request method (a HEAD response has no body whatever its headers say).
 */
export function parseResponses (wire: string, methods: string[]): WireResponse[] {
  const responses: WireResponse[] = []
  let at = 0
  for (const method of methods) {
    const headEnd = wire.indexOf('\r\n\r\n', at)
    if (headEnd === -1) throw new Error(`response ${responses.length + 1} missing; rest: ${JSON.stringify(wire.slice(at, at + 200))}`)
    const lines = wire.slice(at, headEnd).split('\r\n')
    const statusLine = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(lines[0])
    if (statusLine === null) throw new Error(`bad status line ${JSON.stringify(lines[0])}`)
    const status = Number(statusLine[1])
    const headers: Record<string, string[]> = {}
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':')
      const name = line.slice(0, colon).toLowerCase()
      ;(headers[name] ??= []).push(line.slice(colon + 1).trim())
    }
    at = headEnd + 4
    let body = ''
    let framing: WireResponse['framing']
    if (method === 'HEAD' || status === 204 || status === 304 || status < 200) {
      framing = 'none'
    } else if (headers['transfer-encoding'] !== undefined) {
      framing = 'chunked'
      for (;;) {
        const sizeEnd = wire.indexOf('\r\n', at)
        const size = parseInt(wire.slice(at, sizeEnd), 16)
        if (Number.isNaN(size)) throw new Error(`bad chunk size at ${JSON.stringify(wire.slice(at, at + 20))}`)
        at = sizeEnd + 2
        if (size === 0) {
          const trailerEnd = wire.indexOf('\r\n', at)
          at = trailerEnd + 2
          break
        }
        body += wire.slice(at, at + size)
        at += size + 2
      }
    } else if (headers['content-length'] !== undefined) {
      framing = 'content-length'
      const length = Number(headers['content-length'][0])
      body = wire.slice(at, at + length)
      if (body.length !== length) throw new Error(`body shorter than content-length ${length}`)
      at += length
    } else {
      framing = 'close'
      body = wire.slice(at)
      at = wire.length
    }
    responses.push({ status, reason: statusLine[2], headers, rawHeaders: lines.slice(1), framing, body })
  }
  if (at !== wire.length) throw new Error(`unexpected bytes after ${methods.length} responses: ${JSON.stringify(wire.slice(at, at + 200))}`)
  return responses
}

/** One raw request on its own connection (`Connection: close`), parsed. */
export async function rawRequest (port: number, method: string, target: string, { headers = {} as Record<string, string>, body = '', version = '1.1' } = {}): Promise<WireResponse> {
  const lines = [`${method} ${target} HTTP/${version}`]
  const all: Record<string, string> = { host: `127.0.0.1:${port}`, connection: 'close', ...headers }
  for (const [name, value] of Object.entries(all)) if (value !== '') lines.push(`${name}: ${value}`)
  if (body !== '' && all['content-length'] === undefined && all['transfer-encoding'] === undefined) lines.push(`content-length: ${Buffer.byteLength(body)}`)
  const wire = await rawExchange(port, lines.join('\r\n') + '\r\n\r\n' + body)
  return parseResponses(wire, [method])[0]
}

export interface Http2Result { headers: IncomingHttpHeaders, body: Buffer }

export function http2Request (base: string, path: string, { method = 'GET', body, headers: requestHeaders = {} }: { method?: string, body?: string, headers?: Record<string, string> } = {}): Promise<Http2Result> {
  return new Promise((resolve, reject) => {
    const client = connectHttp2(base)
    client.on('error', reject)
    const stream = client.request({ ...requestHeaders, ':method': method, ':path': path })
    const chunks: Buffer[] = []
    let headers: IncomingHttpHeaders = {}
    stream.on('response', (h) => { headers = h })
    stream.on('data', (chunk: Buffer) => chunks.push(chunk))
    stream.on('end', () => { client.close(); resolve({ headers, body: Buffer.concat(chunks) }) })
    stream.on('error', (err) => { client.close(); reject(err) })
    if (body !== undefined) stream.end(body)
    else stream.end()
  })
}
