import { Buffer } from 'node:buffer'
import { performance } from 'node:perf_hooks'
import { Transform, type Readable, type TransformCallback } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest, preParsingAsyncHookHandler } from 'fastify'
import type { FastifyHonoBindings, FastifyHonoExecutionContext, FetchApp } from '../bindings.js'
import { appPath, originAndPath, type Mount } from '../request/url.js'
import { responseParts } from '../web/response.js'
import { compareAnswers, type Answer } from './compare.js'
import type { ResolvedMirror } from './options.js'

/**
 * Mirroring a route: a sample of the Fastify route's requests also runs
 * through the Hono twin, once Fastify has answered the client, and the two
 * answers are compared (compare.ts). Hooks on the Fastify route alone do it:
 * `onRequest` samples, `preParsing` keeps a copy of the body where the
 * method has one, `onSend` keeps Fastify's answer, `onResponse` starts the
 * mirrored run on the next turn of the event loop. The run sees what a
 * mounted request sees (the same Fastify request, with what the hooks set),
 * through a reply of its own whose headers count toward its answer and that
 * writes nothing. Bounded: a sample rate, at most `concurrency` runs at once
 * (past it the request is skipped and counted), a timeout (counted as
 * errored) and a byte bound per answer (past it, skipped). A failure is
 * counted and logged at debug, never as an error of the real request.
 */

/** What the mirrors of one mount share. */
export interface MirrorContext {
  readonly app: FetchApp
  readonly mount: Mount
  readonly fastify: FastifyInstance
  readonly concurrency: number
  readonly timeout: number
  readonly logValues: boolean
  inFlight: number
}

/** A route's mirror counts and latencies, as `honoMigration()` reports them. */
export class MirrorStats {
  compared = 0
  matched = 0
  mismatched = 0
  errored = 0
  skipped = 0
  readonly skippedBy: Record<string, number> = {}
  /** The paths of the last mismatch. */
  lastMismatch: string[] = []
  readonly fastifyMs = new Samples()
  readonly honoMs = new Samples()

  skip (reason: string): void {
    this.skipped++
    this.skippedBy[reason] = (this.skippedBy[reason] ?? 0) + 1
  }
}

/** The last 1,024 latencies, for percentiles. */
export class Samples {
  readonly #values: number[] = []
  #next = 0

  add (ms: number): void {
    if (this.#values.length < 1024) this.#values.push(ms)
    else this.#values[this.#next] = ms
    this.#next = (this.#next + 1) % 1024
  }

  percentiles (): { p50: number, p99: number } | undefined {
    if (this.#values.length === 0) return undefined
    const sorted = [...this.#values].sort((a, b) => a - b)
    const at = (q: number): number => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 1000) / 1000
    return { p50: at(0.5), p99: at(0.99) }
  }
}

/** One sampled request, from its onRequest to its mirrored run. */
interface Sampled {
  body: Buffer[] | undefined
  bodyBytes: number
  skip: string | undefined
  fastify: Omit<Answer, 'body'> & { body: unknown } | undefined
}

type RouteHooks = Record<'onRequest' | 'onSend' | 'onResponse', (...args: never[]) => unknown> & { preParsing?: preParsingAsyncHookHandler }

/** The hooks that mirror one Fastify route, added to its route options. */
export function mirrorHooks (route: string, mirror: ResolvedMirror, context: MirrorContext, stats: MirrorStats): RouteHooks {
  const sampled = new WeakMap<FastifyRequest, Sampled>()
  const hooks: RouteHooks = {
    onRequest (request: FastifyRequest, _reply: FastifyReply, done: () => void) {
      if (mirror.sample >= 1 || Math.random() < mirror.sample) sampled.set(request, { body: mirror.withBody ? [] : undefined, bodyBytes: 0, skip: undefined, fastify: undefined })
      done()
    },
    onSend (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) {
      const state = sampled.get(request)
      if (state !== undefined) {
        state.fastify = { status: reply.statusCode, headers: flatHeaders(reply.getHeaders()), body: payload }
      }
      done(null, payload)
    },
    onResponse (request: FastifyRequest, reply: FastifyReply, done: () => void) {
      const state = sampled.get(request)
      if (state !== undefined) {
        sampled.delete(request)
        const fastifyMs = reply.elapsedTime
        setImmediate(() => { run(route, mirror, context, stats, request, state, fastifyMs).catch(() => {}) })
      }
      done()
    }
  }
  if (mirror.withBody) {
    hooks.preParsing = async (request, _reply, payload) => {
      const state = sampled.get(request)
      return state === undefined ? payload : keepCopy(payload, state, mirror.maxBytes)
    }
  }
  return hooks
}

/** The request body passed on unchanged, a copy kept (up to the byte bound) for the mirrored run. */
function keepCopy (payload: Readable, state: Sampled, maxBytes: number): Readable {
  const copy = new Transform({
    transform (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      if (state.body !== undefined) {
        state.bodyBytes += chunk.length
        if (state.bodyBytes > maxBytes) {
          state.body = undefined
          state.skip = 'request body over maxBytes'
        } else {
          state.body.push(chunk)
        }
      }
      callback(null, chunk)
    }
  })
  // Fastify checks the length a decoding preParsing hook received, where one did.
  const source = payload as Readable & { receivedEncodedLength?: number }
  if ('receivedEncodedLength' in source) Object.defineProperty(copy, 'receivedEncodedLength', { get: () => source.receivedEncodedLength })
  payload.on('error', (err) => copy.destroy(err))
  return payload.pipe(copy)
}

async function run (route: string, mirror: ResolvedMirror, context: MirrorContext, stats: MirrorStats, request: FastifyRequest, state: Sampled, fastifyMs: number): Promise<void> {
  const fastifyAnswer = state.fastify
  if (state.skip !== undefined) return stats.skip(state.skip)
  if (fastifyAnswer === undefined) return stats.skip('no Fastify answer')
  const fastifyBody = payloadBytes(fastifyAnswer.body)
  if (fastifyBody === undefined) return stats.skip('Fastify answered with a stream')
  if (fastifyBody.length > mirror.maxBytes) return stats.skip('Fastify answer over maxBytes')
  if (context.inFlight >= context.concurrency) return stats.skip('mirrorConcurrency')
  context.inFlight++
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  const work = honoAnswer(context, request, state, mirror.maxBytes)
  work.then(done, done)
  function done (): void { context.inFlight-- }
  try {
    const hono = await Promise.race([work, new Promise<never>((_resolve, reject) => { timer = setTimeout(reject, context.timeout, new Error(`no answer within mirrorTimeout (${context.timeout} ms)`)) })])
    if (hono === undefined) return stats.skip('Hono answer over maxBytes')
    stats.fastifyMs.add(fastifyMs)
    stats.honoMs.add(performance.now() - started)
    stats.compared++
    const differences = compareAnswers({ status: fastifyAnswer.status, headers: fastifyAnswer.headers, body: fastifyBody }, hono, mirror)
    if (differences.length === 0) {
      stats.matched++
      return
    }
    stats.mismatched++
    stats.lastMismatch = differences.map((difference) => difference.path)
    request.log.warn({
      route,
      paths: stats.lastMismatch,
      ...(context.logValues ? { differences } : {})
    }, 'fastify-hono mirror: the Hono twin answered differently')
  } catch (err) {
    stats.errored++
    request.log.debug({ route, mirrorError: { message: (err as Error)?.message } }, 'fastify-hono mirror: the mirrored run failed (the client had Fastify\'s answer)')
  } finally {
    clearTimeout(timer)
  }
}

/** The Hono twin's answer to the same request, read up to maxBytes (undefined past it). */
async function honoAnswer (context: MirrorContext, request: FastifyRequest, state: Sampled, maxBytes: number): Promise<Answer | undefined> {
  const raw = request.raw
  const method = raw.method ?? 'GET'
  const url = originAndPath(request, appPath(request.url, context.mount))
  const headers = new Headers()
  for (let i = 0; i < raw.rawHeaders.length; i += 2) {
    const name = raw.rawHeaders[i]
    if (name.charCodeAt(0) !== 58 /* : */) headers.append(name, raw.rawHeaders[i + 1])
  }
  const body = state.body === undefined ? null : Buffer.concat(state.body)
  if (body !== null) headers.delete('transfer-encoding')
  const appRequest = new Request(url, { method, headers, body: method === 'GET' || method === 'HEAD' ? null : body })
  const reply = new MirrorReply(request)
  const env = { incoming: raw, outgoing: undefined, request, reply: reply as unknown as FastifyReply, fastify: context.fastify } as FastifyHonoBindings
  const response = await context.app.fetch(appRequest, env, MIRROR_EXECUTION_CONTEXT)
  const bytes = await readUpTo(response, maxBytes)
  if (bytes === undefined) return undefined
  const answerHeaders = flatHeaders(reply.getHeaders())
  for (const [name, value] of response.headers) answerHeaders[name] = value
  return { status: response.status, headers: answerHeaders, body: bytes }
}

async function readUpTo (response: Response, maxBytes: number): Promise<Buffer | undefined> {
  // A lightweight Response's stored body, as it is: no stream made to read it.
  const parts = responseParts(response)
  if (parts !== undefined) {
    const stored = parts.body
    const bytes = stored === null ? Buffer.alloc(0) : typeof stored === 'string' ? Buffer.from(stored) : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength)
    return bytes.length > maxBytes ? undefined : bytes
  }
  if (response.body === null) return Buffer.alloc(0)
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return Buffer.concat(chunks)
    total += value.byteLength
    if (total > maxBytes) {
      reader.cancel().catch(() => {})
      return undefined
    }
    chunks.push(value)
  }
}

/** Fastify's payload as bytes, or undefined for a stream. */
function payloadBytes (payload: unknown): Buffer | undefined {
  if (payload === null || payload === undefined) return Buffer.alloc(0)
  if (typeof payload === 'string') return Buffer.from(payload)
  if (Buffer.isBuffer(payload)) return payload
  if (payload instanceof Uint8Array) return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)
  return undefined
}

function flatHeaders (headers: Record<string, unknown>): Record<string, string> {
  const flat: Record<string, string> = {}
  for (const name in headers) {
    const value = headers[name]
    if (value === undefined) continue
    flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value)
  }
  return flat
}

/**
 * The reply a mirrored run sees as `c.env.reply`: headers it sets count
 * toward the twin's answer; it writes nothing, and what would send or take
 * over the response throws (counted as errored).
 */
class MirrorReply {
  readonly request: FastifyRequest
  readonly log: FastifyRequest['log']
  statusCode = 200
  readonly #headers: Record<string, unknown> = {}

  constructor (request: FastifyRequest) {
    this.request = request
    this.log = request.log
  }

  get sent (): boolean { return false }
  header (name: string, value: unknown): this { this.#headers[name.toLowerCase()] = value; return this }
  headers (values: Record<string, unknown>): this { for (const name in values) this.header(name, values[name]); return this }
  getHeader (name: string): unknown { return this.#headers[name.toLowerCase()] }
  getHeaders (): Record<string, unknown> { return { ...this.#headers } }
  hasHeader (name: string): boolean { return this.#headers[name.toLowerCase()] !== undefined }
  removeHeader (name: string): this { delete this.#headers[name.toLowerCase()]; return this }
  code (statusCode: number): this { this.statusCode = statusCode; return this }
  status (statusCode: number): this { return this.code(statusCode) }
  send (): never { throw new Error('c.env.reply.send() in a mirrored run: the mirror writes nothing') }
  hijack (): never { throw new Error('c.env.reply.hijack() in a mirrored run: the mirror writes nothing') }
}

/** waitUntil() in a mirrored run: the promise is left to itself (its rejection caught); close() does not wait for it. */
const MIRROR_EXECUTION_CONTEXT: FastifyHonoExecutionContext = Object.freeze({
  waitUntil (promise: Promise<unknown>) { Promise.resolve(promise).catch(() => {}) },
  passThroughOnException () {},
  props: Object.freeze({})
})
