import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { Http2ServerResponse } from 'node:http2'
import type { FastifyReply } from 'fastify'
import { forgetFailedHead, setContentLength } from '../internals/node.js'
import { lowercaseName } from '../web/headers.js'
import type { AppHeaders, HeadLines, HeadPlan } from './plan.js'

/**
 * The head: the merge of the app's headers over the reply's, for every way
 * out, and the one guarded writeHead of the plugin, which may have to undo
 * it.
 */

/**
 * A merge of the app's headers over the reply's, and how to take it back,
 * so that an error answer carries none of the failed response's headers.
 * Made in a header record (for our writers and the onSend hooks we run:
 * merging into the reply's own record, as reply.send hands it to writeHead,
 * spares a copy of every header Fastify hooks set), or through the reply's
 * public methods (`reply`, for reply.send). Where onSend hooks run between
 * the merge and the write (`whole`), what the reply held before is kept and
 * put back whole, so that what the hooks set for the failed response goes
 * too (a compression hook's Content-Encoding, an ETag); otherwise only what
 * the merge changed is noted (name, then the value before, or undefined).
 */
export class Merge {
  readonly record: Record<string, string | string[]> | undefined
  readonly reply: FastifyReply | undefined
  /** Without `whole`: each name the merge set, then the value it had before (undefined for none). */
  readonly changes: Array<string | number | string[] | undefined> | undefined
  /** With `whole`: every header the reply held before the merge. */
  saved: Readonly<Record<string, unknown>> | undefined

  constructor (record: Record<string, string | string[]> | undefined, reply: FastifyReply | undefined, whole: boolean) {
    this.record = record
    this.reply = reply
    this.changes = whole ? undefined : []
    this.saved = whole ? copyHeaders(record ?? reply!.getHeaders()) : undefined
  }

  /** Puts the headers back as they were before the merge (with `whole`, every header; else later changes to other names stay). */
  undo (): void {
    const { record, reply, changes, saved } = this
    if (saved !== undefined) {
      this.saved = undefined
      if (record !== undefined) {
        for (const name in record) if (saved[name] === undefined) delete record[name]
        Object.assign(record, saved)
      } else {
        for (const name in reply!.getHeaders()) removeHeader(reply!, name)
        for (const name in saved) reply!.header(name, saved[name])
      }
      return
    }
    if (changes === undefined) return
    for (let i = changes.length - 2; i >= 0; i -= 2) {
      const name = changes[i] as string
      const before = changes[i + 1]
      if (record !== undefined) {
        if (before === undefined) delete record[name]
        else record[name] = before as string | string[]
      } else {
        removeHeader(reply!, name)
        if (before !== undefined) reply!.header(name, before)
      }
    }
    changes.length = 0
  }
}

/**
 * A header off the reply and off the raw response, where Fastify's stream
 * pump copies the reply's headers before its first read.
 */
function removeHeader (reply: FastifyReply, name: string): void {
  reply.removeHeader(name)
  reply.raw.removeHeader(name)
}

/**
 * A copy of a header record, its arrays (Set-Cookie) copied too: Fastify's
 * reply.header() pushes a cookie into the array the record holds.
 */
function copyHeaders (record: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...record }
  for (const name in copy) {
    const value = copy[name]
    if (Array.isArray(value)) copy[name] = [...value]
  }
  return copy
}

/** What undoes a failed head: a merge to take back, or a function that puts the reply back. */
type Undo = Merge | (() => void) | undefined

/**
 * Merges the app's headers into `record` (the app wins, Set-Cookie and Vary
 * combine), then `defaultType` and `length` where the record has none.
 * `whole`: onSend hooks run before the write (see Merge).
 */
export function mergeHeaders (record: Record<string, string | string[]>, source: AppHeaders, defaultType: string | undefined, length?: number, whole = false): Merge {
  const merge = new Merge(record, undefined, whole)
  const changes = merge.changes as Array<string | string[] | undefined> | undefined
  addHeaders(record, source, changes)
  if (defaultType !== undefined && record['content-type'] === undefined) {
    changes?.push('content-type', undefined)
    record['content-type'] = defaultType
  }
  if (length !== undefined) {
    changes?.push('content-length', record['content-length'])
    record['content-length'] = String(length)
  }
  return merge
}

/**
 * The same merge, through reply.header(), getHeader() and hasHeader(), for
 * reply.send: the app's headers (a list of lowercase names and values, each
 * checked already) over what Fastify hooks set (Fastify's reply.header keeps
 * every Set-Cookie; Vary combines here), then `defaultType` where neither
 * side has a Content-Type, and `length`.
 */
export function mergeThroughReply (reply: FastifyReply, list: readonly string[], defaultType: string | undefined, length: number | undefined, whole: boolean): Merge {
  const merge = new Merge(undefined, reply, whole)
  const changes = merge.changes
  for (let i = 0; i < list.length; i += 2) {
    const name = list[i]
    const value = list[i + 1]
    const existing = reply.getHeader(name)
    // Fastify's reply.header pushes a Set-Cookie into the array it holds: the value before is a copy.
    changes?.push(name, Array.isArray(existing) ? [...existing] : existing)
    reply.header(name, name === 'vary' && existing !== undefined ? combineVary(String(existing), value) : value)
  }
  if (defaultType !== undefined && !reply.hasHeader('content-type')) {
    changes?.push('content-type', undefined)
    reply.header('content-type', defaultType)
  }
  if (length !== undefined) {
    changes?.push('content-length', reply.getHeader('content-length'))
    reply.header('content-length', String(length))
  }
  return merge
}

/**
 * The one writeHead. When Node rejects the status or a header, its state is
 * reset (internals/node.ts, forgetFailedHead), `undo` puts the reply's
 * headers back, and the error goes on to Fastify's error handler, which
 * answers 500 on a clean slate.
 */
function writeHead (raw: ServerResponse | Http2ServerResponse, status: number, head: HeadLines, undo: Undo): void {
  try {
    (raw as ServerResponse).writeHead(status, head as OutgoingHttpHeaders)
  } catch (err) {
    if (typeof undo === 'function') undo()
    else undo?.undo()
    forgetFailedHead(raw)
    throw err
  }
}

/**
 * The head of a plan for the own writer (own-writer.ts): the merge into
 * Fastify's record made, the length announced (preset for Node to write, or
 * added to a copy of the head), then writeHead; when it fails, the merge is
 * taken back, or without one, `undo` runs.
 */
export function writePlannedHead (raw: ServerResponse | Http2ServerResponse, plan: HeadPlan, undo: (() => void) | undefined): void {
  let head = plan.head
  const merge = plan.merge === undefined ? undefined : mergeHeaders(head as Record<string, string | string[]>, plan.merge, plan.defaultType)
  const length = plan.length
  if (length !== undefined) {
    if (plan.nodeWritesLength) setContentLength(raw as ServerResponse, length)
    else head = withLength(head, length)
  }
  writeHead(raw, plan.status, head, merge ?? undo)
}

/** A copy of the head with an explicit Content-Length (the plan ruled out one already there). */
function withLength (headers: HeadLines, length: number): HeadLines {
  if (Array.isArray(headers)) return [...headers, 'content-length', String(length)]
  return { ...headers, 'content-length': String(length) }
}

/**
 * Adds the app's headers (a list, or a record whose names are lowercased
 * here) to a record; `changes`, when given, notes each name and the value it
 * replaced.
 */
function addHeaders (record: Record<string, string | string[]>, source: AppHeaders, changes: Array<string | string[] | undefined> | undefined): void {
  if (Array.isArray(source)) {
    const list = source as readonly string[]
    for (let i = 0; i < list.length; i += 2) {
      const before = addHeader(record, list[i], list[i + 1])
      changes?.push(list[i], before)
    }
    return
  }
  const init = source as Readonly<Record<string, string>>
  for (const name in init) {
    const lower = lowercaseName(name)
    const before = addHeader(record, lower, init[name])
    changes?.push(lower, before)
  }
}

/** Adds one app header (lowercase name): the app wins, Set-Cookie and Vary combine. Returns the value it replaced. */
function addHeader (record: Record<string, string | string[]>, name: string, value: string): string | string[] | undefined {
  const existing = record[name]
  if (existing === undefined) record[name] = value
  else if (name === 'set-cookie') record[name] = Array.isArray(existing) ? [...existing, value] : [existing, value]
  else if (name === 'vary') record[name] = combineVary(String(existing), value)
  else record[name] = value
  return existing
}

/** Merges two Vary lists, each field once (case-insensitively), `*` absorbing the rest. */
function combineVary (first: string, second: string): string {
  const seen = new Set<string>()
  const fields: string[] = []
  for (const field of (first + ',' + second).split(',')) {
    const trimmed = field.trim()
    if (trimmed === '') continue
    if (trimmed === '*') return '*'
    const key = trimmed.toLowerCase()
    if (seen.has(key)) continue
    seen.add(key)
    fields.push(trimmed)
  }
  return fields.join(', ')
}
