// The client side of test/differential.test.ts: starts the two server
// processes, talks to them over real sockets (raw HTTP/1.x on node:net, and
// node:http2), records what came back and when, and reads what the app
// observed. Everything here is bounded in time and closes what it opens.
import { spawn, type ChildProcess } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { connect as connectHttp2, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { parseOne } from './wire-client'
import type { WireResponse } from './net'

export const fixtures = join(__dirname, '..', 'fixtures', 'differential')

export type SideName = 'node-server' | 'plugin'

/** One server process: where its HTTP/1.1 and HTTP/2 servers listen, and the prefix the app sits under. */
export interface Side {
  name: SideName
  port: number
  h2port: number
  prefix: string
  /** What the process wrote to stderr so far (Hono and node-server log errors there). */
  stderr: () => string
  /** The process is still running. */
  alive: () => boolean
}

/** Starts one server process and resolves once it printed its ports. */
export function startSide (name: SideName): Promise<Side & { close: () => Promise<void> }> {
  const file = join(fixtures, name === 'node-server' ? 'node-server.mjs' : 'plugin-server.mjs')
  const child: ChildProcess = spawn(process.execPath, [file], { stdio: ['pipe', 'pipe', 'pipe'], cwd: join(__dirname, '..', '..') })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => { if (stderr.length < 200_000) stderr += chunk.toString() })
  const close = (): Promise<void> => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) { resolve(); return }
    const timer = setTimeout(() => { child.kill('SIGKILL') }, 2000)
    child.once('exit', () => { clearTimeout(timer); resolve() })
    child.stdin!.end()
  })
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${name} did not start in 15 s: ${stderr}`)) }, 15_000)
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${name} exited with ${code}: ${stderr}`)) })
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const line = out.indexOf('\n')
      if (line === -1) return
      clearTimeout(timer)
      child.removeAllListeners('exit')
      const { h1, h2 } = JSON.parse(out.slice(0, line)) as { h1: number, h2: number }
      const alive = (): boolean => child.exitCode === null && child.signalCode === null
      resolve({ name, port: h1, h2port: h2, prefix: name === 'plugin' ? '/m' : '', stderr: () => stderr, alive, close })
    })
  })
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------------------
// HTTP/1.x over a raw socket

export type Step = { wait: number } | { send: string | Buffer } | { leave: true }

export interface WireOptions {
  /** The request's bytes sent at once (head, and the body if any). */
  request: string | Buffer
  /** The request method, for framing the response (a HEAD response has no body). */
  method: string
  /** Sent after `request`, in order. */
  steps?: Step[]
  /** Leave (destroy the socket) once the head arrived, once the first body bytes did, or that many ms after the request. */
  leave?: 'head' | 'first-body' | number
  /** After a complete response, wait up to this long for the server to close the connection. */
  closeWithin?: number
  /** Read this many responses (pipelining); default 1. */
  responses?: number
  /** Give up after this long (ms); default 5000. */
  timeout?: number
}

export interface WireOutcome {
  responses: WireResponse[]
  /** A response that was cut off: the head and what came of the body. */
  truncated?: { status: number, reason: string, headers: Record<string, string[]>, body: string, framing: string }
  /** Ms from the request's first write: the head arrived, the first body bytes arrived, the response was complete, the server closed. */
  headAt?: number
  firstBodyAt?: number
  completeAt?: number
  closedAt?: number
  /** 100 Continue and other interim responses seen. */
  interim: number
  /** We left (leave option) before the response was complete. */
  left: boolean
  timedOut: boolean
  error?: string
}

export function wire (port: number, options: WireOptions): Promise<WireOutcome> {
  const { request, method, steps = [], leave, closeWithin, responses: wanted = 1, timeout = 5000 } = options
  return new Promise((resolve) => {
    const outcome: WireOutcome = { responses: [], interim: 0, left: false, timedOut: false }
    let buffer = ''
    let start = 0
    let headSeen = false
    let closed = false
    let finished = false
    const socket: Socket = connect(port, '127.0.0.1')
    socket.setNoDelay(true)
    const elapsed = (): number => Math.round(performance.now() - start)
    const finish = (): void => {
      if (finished) return
      finished = true
      clearTimeout(overall)
      socket.destroy()
      resolve(outcome)
    }
    const overall = setTimeout(() => { outcome.timedOut = true; cutOff(); finish() }, timeout)
    const leaveNow = (): void => {
      if (outcome.responses.length < wanted) outcome.left = true
      cutOff()
      finish()
    }
    /** Keeps what came of an unfinished response. */
    const cutOff = (): void => {
      if (outcome.responses.length >= wanted || buffer === '') return
      outcome.truncated = lenientParse(buffer)
    }
    const runSteps = async (): Promise<void> => {
      for (const step of steps) {
        if (finished) return
        if ('wait' in step) {
          await sleep(step.wait)
        } else if ('leave' in step) {
          leaveNow()
          return
        } else if (!closed) {
          socket.write(step.send)
        }
      }
    }
    const parse = (): void => {
      for (;;) {
        if (!headSeen && buffer.includes('\r\n\r\n')) {
          headSeen = true
          outcome.headAt ??= elapsed()
        }
        if (headSeen && outcome.firstBodyAt === undefined && buffer.length > buffer.indexOf('\r\n\r\n') + 4 && method !== 'HEAD') {
          outcome.firstBodyAt = elapsed()
        }
        let parsed: ReturnType<typeof parseOne>
        try {
          parsed = parseOne(buffer, outcome.responses.length === 0 ? method : 'GET', closed)
        } catch (err) {
          outcome.error = (err as Error).message
          cutOff()
          finish()
          return
        }
        if (parsed === null) return
        buffer = buffer.slice(parsed.consumed)
        headSeen = false
        if (parsed.response.status < 200 && parsed.response.status !== 101) {
          outcome.interim++
          continue
        }
        outcome.responses.push(parsed.response)
        if (outcome.responses.length < wanted) continue
        outcome.completeAt = elapsed()
        if (closeWithin === undefined || closed) { finish(); return }
        setTimeout(finish, closeWithin)
        return
      }
    }
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('latin1')
      parse()
      if (finished) return
      if (leave === 'head' && headSeen) leaveNow()
      else if (leave === 'first-body' && outcome.firstBodyAt !== undefined) leaveNow()
    })
    const onClose = (): void => {
      // After finish, the close is our own destroy.
      if (closed || finished) return
      closed = true
      outcome.closedAt = elapsed()
      if (outcome.responses.length < wanted) {
        parse()
        if (outcome.responses.length < wanted) cutOff()
      }
      finish()
    }
    socket.on('end', onClose)
    socket.on('close', onClose)
    socket.on('error', (err: NodeJS.ErrnoException) => { outcome.error ??= err.code ?? err.message; onClose() })
    socket.once('connect', () => {
      start = performance.now()
      socket.write(request)
      if (typeof leave === 'number') setTimeout(leaveNow, leave)
      runSteps().catch(() => {})
    })
  })
}

/** The head and whatever body bytes came, for a response the server cut off. */
function lenientParse (wire: string): WireOutcome['truncated'] {
  const headEnd = wire.indexOf('\r\n\r\n')
  if (headEnd === -1) return { status: 0, reason: '', headers: {}, body: wire, framing: 'no head' }
  const lines = wire.slice(0, headEnd).split('\r\n')
  const statusLine = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(lines[0])
  const headers: Record<string, string[]> = {}
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    ;(headers[line.slice(0, colon).toLowerCase()] ??= []).push(line.slice(colon + 1).trim())
  }
  let rest = wire.slice(headEnd + 4)
  if (headers['transfer-encoding'] === undefined) return { status: Number(statusLine?.[1] ?? 0), reason: statusLine?.[2] ?? '', headers, body: rest, framing: 'truncated' }
  let body = ''
  for (;;) {
    const sizeEnd = rest.indexOf('\r\n')
    if (sizeEnd === -1) break
    const size = parseInt(rest.slice(0, sizeEnd), 16)
    if (Number.isNaN(size) || size === 0) break
    body += rest.slice(sizeEnd + 2, sizeEnd + 2 + size)
    rest = rest.slice(sizeEnd + 2 + size + 2)
  }
  return { status: Number(statusLine?.[1] ?? 0), reason: statusLine?.[2] ?? '', headers, body, framing: 'chunked, truncated' }
}

/**
 * A request head (and body) in wire form, with Host, Content-Length for a body
 * without framing headers and, unless `close` is false, Connection: close.
 */
export function requestBytes (method: string, target: string, { headers = {} as Record<string, string | undefined>, body = '' as string | Buffer, version = '1.1', close = true } = {}): Buffer {
  const lines = [`${method} ${target} HTTP/${version}`]
  const all: Record<string, string | undefined> = { host: 'localhost', ...(close ? { connection: 'close' } : {}), ...headers }
  const bytes = typeof body === 'string' ? Buffer.from(body) : body
  const names = Object.keys(all).map((name) => name.toLowerCase())
  if (bytes.length > 0 && !names.includes('content-length') && !names.includes('transfer-encoding')) all['content-length'] = String(bytes.length)
  // An undefined value leaves the header out (a request without Host, say).
  for (const [name, value] of Object.entries(all)) if (value !== undefined) lines.push(`${name}: ${value}`)
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), bytes])
}

// ---------------------------------------------------------------------------
// HTTP/2

export interface H2Options {
  method?: string
  path: string
  headers?: OutgoingHttpHeaders
  body?: string | Buffer
  /** Keep the request stream open after the body (no END_STREAM). */
  keepOpen?: boolean
  /** Cancel the stream once the first data arrived. */
  leave?: 'first-body'
  /** After the response ended, wait up to this long for the stream to close. */
  closeWithin?: number
  timeout?: number
}

export interface H2Outcome {
  headers: IncomingHttpHeaders
  body: string
  headAt?: number
  firstBodyAt?: number
  endAt?: number
  /** The stream closed, and the RST_STREAM code it closed with (0 when none). */
  closedAt?: number
  rstCode?: number
  left: boolean
  timedOut: boolean
  error?: string
}

export function h2 (port: number, options: H2Options): Promise<H2Outcome> {
  const { method = 'GET', path, headers = {}, body, keepOpen = false, leave, closeWithin, timeout = 5000 } = options
  return new Promise((resolve) => {
    const outcome: H2Outcome = { headers: {}, body: '', left: false, timedOut: false }
    const session: ClientHttp2Session = connectHttp2(`http://127.0.0.1:${port}`)
    session.on('error', (err: NodeJS.ErrnoException) => { outcome.error ??= err.code ?? err.message; finish() })
    const start = performance.now()
    const elapsed = (): number => Math.round(performance.now() - start)
    let finished = false
    let ended = false
    const finish = (): void => {
      if (finished) return
      finished = true
      clearTimeout(overall)
      session.destroy()
      resolve(outcome)
    }
    const overall = setTimeout(() => { outcome.timedOut = true; finish() }, timeout)
    const stream: ClientHttp2Stream = session.request({ ...headers, ':method': method, ':path': path }, { endStream: body === undefined && !keepOpen })
    const chunks: Buffer[] = []
    stream.on('response', (h) => { outcome.headers = h; outcome.headAt = elapsed() })
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      outcome.firstBodyAt ??= elapsed()
      outcome.body = Buffer.concat(chunks).toString('latin1')
      if (leave === 'first-body') {
        outcome.left = true
        stream.close(0x8) // CANCEL
        finish()
      }
    })
    stream.on('end', () => {
      ended = true
      outcome.endAt = elapsed()
      outcome.body = Buffer.concat(chunks).toString('latin1')
      if (closeWithin === undefined) finish()
      else setTimeout(finish, closeWithin)
    })
    stream.on('close', () => {
      if (finished) return // our own destroy
      outcome.closedAt = elapsed()
      outcome.rstCode = stream.rstCode
      outcome.body = Buffer.concat(chunks).toString('latin1')
      if (!ended || closeWithin !== undefined) finish()
    })
    stream.on('error', (err: NodeJS.ErrnoException) => { outcome.error ??= err.code ?? err.message })
    if (body !== undefined) {
      if (keepOpen) stream.write(body)
      else stream.end(body)
    }
  })
}

// ---------------------------------------------------------------------------
// What the app observed

export interface Observed {
  facts: Record<string, unknown>
  notes: Record<string, unknown>
  timedOut: boolean
}

/** The facts the app recorded under `id`, once `until` are all in or `timeout` ms have passed. */
export async function observed (side: Side, id: string, until: string[] = [], timeout = 0): Promise<Observed> {
  const target = `${side.prefix}/__observed?id=${encodeURIComponent(id)}&until=${until.join(',')}&timeout=${timeout}`
  const outcome = await wire(side.port, { request: requestBytes('GET', target), method: 'GET', timeout: timeout + 3000 })
  const response = outcome.responses[0]
  if (response === undefined || response.status !== 200) {
    return { facts: { observeFailed: outcome.error ?? outcome.truncated?.status ?? 'no response' }, notes: {}, timedOut: true }
  }
  return JSON.parse(Buffer.from(response.body, 'latin1').toString()) as Observed
}

// ---------------------------------------------------------------------------
// Normalizing for comparison

/** Compared on neither side: they vary per connection or per server, never per app. */
export const ignoredHeaders = new Set(['date', 'connection', 'keep-alive'])

/**
 * Replaces what differs between two correct servers for reasons that have
 * nothing to do with the app: the port in URLs, and the random boundary of a
 * multipart body.
 */
export function normalizeText (text: string, side: Side, boundary?: string): string {
  let out = text.split(`127.0.0.1:${side.port}`).join('HOST').split(`127.0.0.1:${side.h2port}`).join('HOST')
  if (boundary !== undefined) out = out.split(boundary).join('BOUNDARY')
  return out
}

function boundaryOf (headers: Record<string, string[]>): string | undefined {
  const type = headers['content-type']?.[0]
  return type === undefined ? undefined : /boundary=([^;\s]+)/.exec(type)?.[1]
}

/** Header lines as a sorted list of `name: value`, names lowercase, ignored ones left out. */
export function headerSet (headers: Record<string, string[] | string | number | undefined>, side: Side, boundary?: string, skip: Set<string> = ignoredHeaders): string[] {
  const lines: string[] = []
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    if (skip.has(lower) || lower.startsWith(':') || value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) lines.push(`${lower}: ${normalizeText(String(one), side, boundary)}`)
  }
  return lines.sort()
}

/** Compared apart from the other headers: the Content-Type, and the framing headers (see framingOf). */
const apart = new Set([...ignoredHeaders, 'content-type', 'content-length', 'transfer-encoding'])

/** A body as compared: the text when short, its length and digest when long. */
export function bodyView (body: string, side: Side, boundary?: string): string {
  const text = normalizeText(Buffer.from(body, 'latin1').toString(), side, boundary)
  if (body.length <= 2048) return text
  return `${body.length} bytes, sha1 ${createHash('sha1').update(Buffer.from(body, 'latin1')).digest('hex')}`
}

/**
 * How the body was delimited: `content-length N`, `chunked`, `close` (until
 * the server closed), `none` (HEAD, 204, 304), with any length header a
 * bodiless or chunked response carried as well.
 */
function framingOf (framing: string, headers: Record<string, string[]>): string {
  const length = headers['content-length']?.join(',')
  if (framing === 'content-length') return `content-length ${length ?? '?'}`
  return length === undefined ? framing : `${framing}, content-length ${length}`
}

function contentTypeOf (headers: Record<string, string[]>, side: Side, boundary?: string): string | null {
  const type = headers['content-type']
  return type === undefined ? null : normalizeText(type.join(', '), side, boundary)
}

/** What is compared of one HTTP/1.x response. */
export function responseView (response: WireResponse, side: Side): Record<string, unknown> {
  const boundary = boundaryOf(response.headers)
  return {
    status: response.status,
    reason: response.reason,
    contentType: contentTypeOf(response.headers, side, boundary),
    headers: headerSet(response.headers, side, boundary, apart),
    framing: framingOf(response.framing, response.headers),
    body: bodyView(response.body, side, boundary)
  }
}

/** What is compared of a response that was cut off. */
export function truncatedView (truncated: NonNullable<WireOutcome['truncated']>, side: Side): Record<string, unknown> {
  return {
    status: truncated.status,
    reason: truncated.reason,
    contentType: contentTypeOf(truncated.headers, side),
    headers: headerSet(truncated.headers, side, undefined, apart),
    framing: framingOf(truncated.framing, truncated.headers),
    body: bodyView(truncated.body, side)
  }
}

/** What is compared of an HTTP/2 response (DATA frames carry the body: only a length header tells anything). */
export function h2View (outcome: H2Outcome, side: Side): Record<string, unknown> {
  const headers = Object.fromEntries(Object.entries(outcome.headers).map(([k, v]) => [k, Array.isArray(v) ? v : [String(v)]]))
  const boundary = boundaryOf(headers)
  const length = headers['content-length']?.join(',')
  return {
    status: outcome.headers[':status'],
    contentType: contentTypeOf(headers, side, boundary),
    headers: headerSet(headers, side, boundary, apart),
    framing: length === undefined ? 'unsized' : `content-length ${length}`,
    body: bodyView(outcome.body, side, boundary)
  }
}
