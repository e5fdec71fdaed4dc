// A keep-alive HTTP/1.x client over a raw socket, for tests that send bytes
// no real client would and then need to know, response by response, whether
// the connection is still in sync. Unlike parseResponses (net.ts), which
// parses a finished exchange, this reads one response at a time from a live
// connection, so a request can follow on the same socket.
import { connect, type Socket } from 'node:net'
import type { WireResponse } from './net'

/** What one read from the connection gave. */
export type ReadResult =
  | { kind: 'response', response: WireResponse, interim: number }
  /** The server closed (or reset) before a full response; `leftover` is what came before. */
  | { kind: 'closed', leftover: string, error?: string }
  /** Bytes that cannot be an HTTP/1.x response, framed as a client must frame them. */
  | { kind: 'malformed', leftover: string, error: string }
  /** Neither a full response nor a close in time. */
  | { kind: 'timeout', leftover: string }

const tchar = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/**
 * Parses one response at the start of `wire` (latin1), framed the way a
 * client must (RFC 9112 §6.3). Returns null when more bytes are needed (or,
 * for a close-delimited body, until the connection closes), throws on bytes
 * that cannot be a response.
 */
export function parseOne (wire: string, method: string, closed: boolean): { response: WireResponse, consumed: number } | null {
  const headEnd = wire.indexOf('\r\n\r\n')
  if (headEnd === -1) {
    if (!'HTTP/1.'.startsWith(wire.slice(0, 7))) throw new Error(`not a status line: ${JSON.stringify(wire.slice(0, 40))}`)
    if (wire.length > 65_536) throw new Error('response head over 64 KiB')
    return null
  }
  const lines = wire.slice(0, headEnd).split('\r\n')
  const statusLine = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(lines[0])
  if (statusLine === null) throw new Error(`bad status line ${JSON.stringify(lines[0].slice(0, 80))}`)
  const status = Number(statusLine[1])
  const headers: Record<string, string[]> = {}
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    const name = line.slice(0, colon)
    if (colon <= 0 || !tchar.test(name)) throw new Error(`bad header line ${JSON.stringify(line.slice(0, 80))}`)
    ;(headers[name.toLowerCase()] ??= []).push(line.slice(colon + 1).trim())
  }
  let at = headEnd + 4
  const done = (framing: WireResponse['framing'], body: string): { response: WireResponse, consumed: number } =>
    ({ response: { status, reason: statusLine[2] ?? '', headers, rawHeaders: lines.slice(1), framing, body }, consumed: at })

  if (method === 'HEAD' || status === 204 || status === 304 || status < 200) return done('none', '')
  const te = headers['transfer-encoding']
  if (te !== undefined) {
    if (!/(?:^|,)\s*chunked$/i.test(te.join(','))) throw new Error(`transfer-encoding without final chunked: ${te.join(',')}`)
    let body = ''
    for (;;) {
      const sizeEnd = wire.indexOf('\r\n', at)
      if (sizeEnd === -1) return needMore(closed, 'chunk size line')
      const sizeLine = wire.slice(at, sizeEnd)
      if (!/^[0-9a-fA-F]{1,8}(?:;.*)?$/.test(sizeLine)) throw new Error(`bad chunk size line ${JSON.stringify(sizeLine.slice(0, 40))}`)
      const size = parseInt(sizeLine, 16)
      at = sizeEnd + 2
      if (size === 0) {
        // Trailer fields, then the empty line.
        for (;;) {
          const lineEnd = wire.indexOf('\r\n', at)
          if (lineEnd === -1) return needMore(closed, 'trailer section')
          const line = wire.slice(at, lineEnd)
          at = lineEnd + 2
          if (line === '') return done('chunked', body)
          if (line.indexOf(':') <= 0) throw new Error(`bad trailer line ${JSON.stringify(line.slice(0, 40))}`)
        }
      }
      if (wire.length < at + size + 2) return needMore(closed, 'chunk data')
      body += wire.slice(at, at + size)
      if (wire.slice(at + size, at + size + 2) !== '\r\n') throw new Error('chunk data not followed by CRLF')
      at += size + 2
    }
  }
  const cl = headers['content-length']
  if (cl !== undefined) {
    if (!cl.every((value) => value === cl[0]) || !/^\d+$/.test(cl[0])) throw new Error(`bad content-length ${cl.join(',')}`)
    const length = Number(cl[0])
    if (wire.length < at + length) return needMore(closed, `body of ${length} bytes`)
    const body = wire.slice(at, at + length)
    at += length
    return done('content-length', body)
  }
  // Close-delimited: the body is whatever comes until the server closes.
  if (!closed) return null
  const body = wire.slice(at)
  at = wire.length
  return done('close', body)
}

function needMore (closed: boolean, what: string): null {
  if (closed) throw new Error(`connection closed inside the ${what}: truncated response`)
  return null
}

/** One client connection; reads responses one at a time. */
export class WireConnection {
  private buffer = ''
  private wake: (() => void) | undefined
  /** The server closed or reset the connection (or we destroyed it). */
  closed = false
  error: string | undefined

  private constructor (private readonly socket: Socket) {
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => { this.buffer += chunk.toString('latin1'); this.notify() })
    socket.on('end', () => { this.closed = true; this.notify() })
    socket.on('close', () => { this.closed = true; this.notify() })
    socket.on('error', (err: NodeJS.ErrnoException) => { this.error ??= err.code ?? err.message; this.closed = true; this.notify() })
  }

  static open (port: number, timeoutMs = 5000): Promise<WireConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1')
      const timer = setTimeout(() => { socket.destroy(); reject(new Error('connect timed out')) }, timeoutMs)
      socket.once('connect', () => { clearTimeout(timer); resolve(new WireConnection(socket)) })
      socket.once('error', (err) => { clearTimeout(timer); reject(err) })
    })
  }

  private notify (): void {
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }

  /** Bytes received and not yet taken by a read. */
  get pending (): string { return this.buffer }

  write (data: string | Buffer): void {
    if (this.closed) return
    // An EPIPE or reset shows up on 'error', which marks the connection closed.
    this.socket.write(typeof data === 'string' ? Buffer.from(data, 'latin1') : data)
  }

  /** Half-closes: the server sees the end of the request stream. */
  end (): void { if (!this.closed) this.socket.end() }

  destroy (): void {
    this.closed = true
    this.socket.destroy()
  }

  /** Drops the next `bytes` bytes, waiting for them; false if the connection closed or the time ran out first. */
  async skip (bytes: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    while (this.buffer.length < bytes) {
      const left = deadline - Date.now()
      if (this.closed || left <= 0) return false
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.wake = () => { clearTimeout(timer); resolve() }
      })
    }
    this.buffer = this.buffer.slice(bytes)
    return true
  }

  /**
   * Reads the next final response (1xx interim responses are counted and
   * skipped), a close, bytes that cannot be a response, or a timeout.
   */
  async read (method: string, timeoutMs: number): Promise<ReadResult> {
    const deadline = Date.now() + timeoutMs
    let interim = 0
    for (;;) {
      let parsed: ReturnType<typeof parseOne>
      try {
        parsed = parseOne(this.buffer, method, this.closed)
      } catch (err) {
        return { kind: 'malformed', leftover: this.buffer, error: (err as Error).message }
      }
      if (parsed !== null) {
        this.buffer = this.buffer.slice(parsed.consumed)
        if (parsed.response.status < 200 && parsed.response.status !== 101) { interim++; continue }
        return { kind: 'response', response: parsed.response, interim }
      }
      if (this.closed) return { kind: 'closed', leftover: this.buffer, error: this.error }
      const left = deadline - Date.now()
      if (left <= 0) return { kind: 'timeout', leftover: this.buffer }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.wake = () => { clearTimeout(timer); resolve() }
      })
    }
  }
}
