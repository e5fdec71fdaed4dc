import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { Http2ServerResponse } from 'node:http2'
import { forgetFailedHead, setContentLength } from '../internals/node.js'
import type { AppHeaders, HeadLines, HeadPlan } from './plan.js'

/**
 * Writing the head: the one guarded writeHead of the plugin, and the merge
 * of the app's headers into Fastify's record that it may have to undo.
 */

/**
 * A merge into a header record: the record, and what changed in it (name,
 * then the value before, or undefined), so that it can be put back and an
 * error answer carries none of the app's headers. Merging into the reply's
 * record, as reply.send hands it to writeHead, spares a copy of every header
 * Fastify hooks set.
 */
interface Merge {
  record: Record<string, string | string[]>
  changes: Array<string | string[] | undefined>
}

/** What undoes a failed head: a merge to take back, or a function that puts the reply back. */
type Undo = Merge | (() => void) | undefined

/**
 * Merges the app's headers into `record` (the app wins, Set-Cookie and Vary
 * combine), then `defaultType` and `length` where the record has none.
 */
export function mergeHeaders (record: Record<string, string | string[]>, source: AppHeaders, defaultType: string | undefined, length?: number): Merge {
  const changes: Merge['changes'] = []
  addHeaders(record, source, changes)
  if (defaultType !== undefined && record['content-type'] === undefined) {
    changes.push('content-type', undefined)
    record['content-type'] = defaultType
  }
  if (length !== undefined) {
    changes.push('content-length', record['content-length'])
    record['content-length'] = String(length)
  }
  return { record, changes }
}

/** Puts the record back as it was before the merge (later changes to other names stay). */
export function undoMerge (merge: Merge): void {
  const { record, changes } = merge
  for (let i = changes.length - 2; i >= 0; i -= 2) {
    const name = changes[i] as string
    const before = changes[i + 1]
    if (before === undefined) delete record[name]
    else record[name] = before
  }
  changes.length = 0
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
    else if (undo !== undefined) undoMerge(undo)
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
export function addHeaders (record: Record<string, string | string[]>, source: AppHeaders, changes: Array<string | string[] | undefined> | undefined): void {
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
    const lower = name.toLowerCase()
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
export function combineVary (first: string, second: string): string {
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
