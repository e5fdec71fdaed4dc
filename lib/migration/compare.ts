import { createHash } from 'node:crypto'

/**
 * The comparison of a mirrored route's two answers: pure, on what each side
 * put on the wire (status, headers, body bytes). It names the places that
 * differ, never their values: `status`, `content-type`, `header:<name>`,
 * and for the body a JSON pointer per differing place (`/user/name`,
 * `/items/2`), or `body` for text (compared exactly) and anything else
 * (compared by length and SHA-256).
 */

/** One side's answer as compared. */
export interface Answer {
  status: number
  /** Lowercase names. */
  headers: Readonly<Record<string, string>>
  body: Buffer
}

export interface CompareOptions {
  /** Lowercase header names compared besides Content-Type. */
  headers: readonly string[]
  /** JSON pointers left out of the comparison; `*` stands for any one key or index (`/items/*\/id`). */
  ignore: readonly string[][]
}

/** A place that differs, and what each side had there (kept out of logs unless asked for). */
export interface Difference {
  path: string
  fastify: unknown
  hono: unknown
}

/** Compares the Fastify route's answer with the Hono twin's. */
export function compareAnswers (fastify: Answer, hono: Answer, options: CompareOptions): Difference[] {
  const differences: Difference[] = []
  if (fastify.status !== hono.status) differences.push({ path: 'status', fastify: fastify.status, hono: hono.status })
  const fastifyType = fastify.headers['content-type']
  const honoType = hono.headers['content-type']
  if (!sameContentType(fastifyType, honoType)) differences.push({ path: 'content-type', fastify: fastifyType, hono: honoType })
  for (const name of options.headers) {
    if (fastify.headers[name] !== hono.headers[name]) differences.push({ path: `header:${name}`, fastify: fastify.headers[name], hono: hono.headers[name] })
  }
  const kind = bodyKind(fastifyType)
  if (kind === 'json' && bodyKind(honoType) === 'json') {
    const left = parseJson(fastify.body)
    const right = parseJson(hono.body)
    if (left.ok && right.ok) {
      diffJson(left.value, right.value, [], options.ignore, differences)
      return differences
    }
    // A body that does not parse is compared as text.
  }
  if (kind === 'text' || kind === 'json') {
    if (!fastify.body.equals(hono.body)) differences.push({ path: 'body', fastify: fastify.body.toString('utf8'), hono: hono.body.toString('utf8') })
  } else if (fastify.body.length !== hono.body.length || digest(fastify.body) !== digest(hono.body)) {
    differences.push({ path: 'body', fastify: `${fastify.body.length} bytes, sha256 ${digest(fastify.body)}`, hono: `${hono.body.length} bytes, sha256 ${digest(hono.body)}` })
  }
  return differences
}

/** A JSON pointer as a list of keys (`/items/*\/id` → ['items', '*', 'id']), unescaping `~1` and `~0`. */
export function parsePointer (pointer: string): string[] {
  if (pointer === '') return []
  return pointer.slice(1).split('/').map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'))
}

/**
 * The same media type, and the same charset where both name one (JSON is
 * UTF-8 whatever it says: Fastify's `application/json; charset=utf-8` and
 * Hono's `application/json` are the same answer).
 */
function sameContentType (a: string | undefined, b: string | undefined): boolean {
  if (a === b) return true
  if (a === undefined || b === undefined) return false
  const left = parseType(a)
  const right = parseType(b)
  if (left.type !== right.type) return false
  if (left.charset === undefined || right.charset === undefined) return true
  return left.charset === right.charset
}

function parseType (value: string): { type: string, charset: string | undefined } {
  const [type, ...params] = value.split(';')
  let charset: string | undefined
  for (const param of params) {
    const [name, raw] = param.split('=')
    if (name.trim().toLowerCase() === 'charset' && raw !== undefined) charset = raw.trim().replace(/^"|"$/g, '').toLowerCase()
  }
  return { type: type.trim().toLowerCase(), charset }
}

function bodyKind (type: string | undefined): 'json' | 'text' | 'bytes' {
  if (type === undefined) return 'bytes'
  const media = parseType(type).type
  if (media === 'application/json' || media.endsWith('+json')) return 'json'
  if (media.startsWith('text/') || media === 'application/xml' || media.endsWith('+xml') || media === 'application/javascript') return 'text'
  return 'bytes'
}

function parseJson (body: Buffer): { ok: true, value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) }
  } catch {
    return { ok: false }
  }
}

function digest (body: Buffer): string {
  return createHash('sha256').update(body).digest('hex')
}

function ignored (path: readonly string[], ignore: readonly string[][]): boolean {
  return ignore.some((pattern) => pattern.length === path.length && pattern.every((key, i) => key === '*' || key === path[i]))
}

function pointer (path: readonly string[]): string {
  return path.length === 0 ? '/' : path.map((key) => '/' + key.replace(/~/g, '~0').replace(/\//g, '~1')).join('')
}

/** Structural difference: objects by key (order aside), arrays by index, the rest by value and type. */
function diffJson (left: unknown, right: unknown, path: string[], ignore: readonly string[][], out: Difference[]): void {
  if (ignored(path, ignore)) return
  if (Array.isArray(left) && Array.isArray(right)) {
    const length = Math.max(left.length, right.length)
    for (let i = 0; i < length; i++) {
      const key = String(i)
      if (i >= left.length || i >= right.length) {
        const at = [...path, key]
        if (!ignored(at, ignore)) out.push({ path: pointer(at), fastify: left[i], hono: right[i] })
      } else {
        diffJson(left[i], right[i], [...path, key], ignore, out)
      }
    }
    return
  }
  if (isObject(left) && isObject(right)) {
    const keys = new Set([...Object.keys(left), ...Object.keys(right)])
    for (const key of keys) {
      const at = [...path, key]
      if (!Object.hasOwn(left, key) || !Object.hasOwn(right, key)) {
        if (!ignored(at, ignore)) out.push({ path: pointer(at), fastify: left[key], hono: right[key] })
      } else {
        diffJson(left[key], right[key], at, ignore, out)
      }
    }
    return
  }
  if (!Object.is(left, right)) out.push({ path: pointer(path), fastify: left, hono: right })
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
