/**
 * The lightweight Headers held by lightweight responses. A native Headers
 * validates every name and value through WebIDL on each call and copies
 * entry by entry: a Hono middleware chain copies a response's headers up to
 * four times per request (docs/responses.md), and that was a quarter of its
 * CPU. This class keeps the same list, already validated and normalized, in a
 * flat array: a copy is an array slice, and the writers read the list as it
 * is. Everything observable matches a native Headers: the validation and its
 * TypeError, value normalization, combining with ", ", Set-Cookie kept
 * apart, sorted iteration; and it is `instanceof Headers`, since its
 * prototype chain includes the native prototype. Inputs it does not handle
 * itself (exotic iterables, records with symbols, …) go through a native
 * Headers first, so they are validated by the real thing.
 *
 * It is installed as the global Headers together with the lightweight
 * Request and Response (see globals.ts), so that the Headers Hono makes
 * (`new Headers()`, `new Headers(c.res.headers)`) are lightweight too.
 * Native Headers objects stay `instanceof Headers`, and the methods work on
 * them when called through the prototype.
 */
import { inspect } from 'node:util'

export const NativeHeaders: typeof globalThis.Headers = globalThis.Headers

const kList = Symbol('fastify-hono.headerList')
const kRaw = Symbol('fastify-hono.rawHeaders')

/** The list of a request's headers that nobody has iterated or changed yet (see requestHeaders). */
const UNREAD: string[] = Object.freeze([]) as unknown as string[]

/** Token characters (RFC 9110), the only ones a header name may have. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** What a value may not contain once its surrounding whitespace is removed. */

const FORBIDDEN_IN_VALUE = /[\0\r\n]/
/** A character above 0xFF: not a ByteString. */
const NOT_BYTE = /[^\0-\xff]/
/** HTTP whitespace around a value, removed as the Fetch standard says. */
const SURROUNDING_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g

export class LightweightHeaders {
  /** Lowercase names and values, flat: [name, value, name, value, …]. One entry per name, except set-cookie. */
  declare [kList]: string[]
  /** A request's raw headers while the list is UNREAD, else undefined. */
  declare [kRaw]: readonly string[] | undefined

  constructor (init?: HeadersInit | null) {
    const self = this
    self[kRaw] = undefined
    if (init === undefined) {
      self[kList] = []
    } else if (isLightweightHeaders(init)) {
      self[kList] = listOf(init).slice()
    } else if (isPlainRecord(init)) {
      // What a native Headers does with a record: each own enumerable key, in order, appended.
      self[kList] = []
      for (const name of Object.keys(init)) this.append(name, (init as Record<string, string>)[name])
    } else if (isArrayOfPairs(init)) {
      self[kList] = []
      for (const [name, value] of init) this.append(name, value)
    } else {
      // A native Headers has validated everything already; anything else is
      // validated by one, so that what is accepted, and how it fails, is native.
      const source = init instanceof NativeHeaders ? init : new NativeHeaders(init as unknown as HeadersInit)
      const list: string[] = []
      source.forEach((value, name) => {
        if (name !== 'set-cookie') list.push(name, value)
      })
      for (const cookie of source.getSetCookie()) list.push('set-cookie', cookie)
      self[kList] = list
    }
  }

  append (name: string, value: string): void {
    if (!isLightweightHeaders(this)) return Reflect.apply(nativeMethod('append'), this, arguments)
    requireArguments('append', arguments.length, 2)
    name = checkName('append', name)
    value = checkValue('append', value)
    const list = listOf(this)
    if (name !== 'set-cookie') {
      for (let i = 0; i < list.length; i += 2) {
        if (list[i] === name) { list[i + 1] += separatorOf(name) + value; return }
      }
    }
    list.push(name, value)
  }

  set (name: string, value: string): void {
    if (!isLightweightHeaders(this)) return Reflect.apply(nativeMethod('set'), this, arguments)
    requireArguments('set', arguments.length, 2)
    name = checkName('set', name)
    value = checkValue('set', value)
    const list = listOf(this)
    let found = false
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] !== name) continue
      if (!found) {
        list[i + 1] = value
        found = true
      } else {
        list.splice(i, 2) // further Set-Cookie entries
        i -= 2
      }
    }
    if (!found) list.push(name, value)
  }

  delete (name: string): void {
    if (!isLightweightHeaders(this)) return Reflect.apply(nativeMethod('delete'), this, arguments)
    requireArguments('delete', arguments.length, 1)
    name = checkName('delete', name)
    const list = listOf(this)
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] === name) {
        list.splice(i, 2)
        i -= 2
      }
    }
  }

  get (name: string): string | null {
    if (!isLightweightHeaders(this)) return Reflect.apply(nativeMethod('get'), this, arguments)
    requireArguments('get', arguments.length, 1)
    name = checkName('get', name)
    const self = this
    if (self[kList] === UNREAD) return rawGet(self[kRaw]!, name)
    const list = self[kList]
    let found: string | null = null
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] !== name) continue
      if (name !== 'set-cookie') return list[i + 1]
      found = found === null ? list[i + 1] : found + ', ' + list[i + 1]
    }
    return found
  }

  has (name: string): boolean {
    if (!isLightweightHeaders(this)) return Reflect.apply(nativeMethod('has'), this, arguments)
    requireArguments('has', arguments.length, 1)
    name = checkName('has', name)
    const self = this
    if (self[kList] === UNREAD) return rawIndexOf(self[kRaw]!, name, 0) !== -1
    const list = self[kList]
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] === name) return true
    }
    return false
  }

  getSetCookie (): string[] {
    if (!isLightweightHeaders(this)) return nativeMethod('getSetCookie').call(this)
    const list = listOf(this)
    const cookies: string[] = []
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] === 'set-cookie') cookies.push(list[i + 1])
    }
    return cookies
  }

  forEach (callback: (value: string, name: string, parent: Headers) => void, thisArg?: unknown): void {
    if (typeof callback !== 'function') {
      throw new TypeError("Headers.forEach: Expected callback to be of type 'Function'.")
    }
    if (!isLightweightHeaders(this)) return nativeMethod('forEach').call(this, callback, thisArg)
    for (const [name, value] of sortedEntries(this)) callback.call(thisArg, value, name, this as Headers)
  }

  entries (): IterableIterator<[string, string]> {
    if (!isLightweightHeaders(this)) return nativeMethod('entries').call(this)
    return sortedEntries(this).values()
  }

  keys (): IterableIterator<string> {
    if (!isLightweightHeaders(this)) return nativeMethod('keys').call(this)
    return sortedEntries(this).map(([name]) => name).values()
  }

  values (): IterableIterator<string> {
    if (!isLightweightHeaders(this)) return nativeMethod('values').call(this)
    return sortedEntries(this).map(([, value]) => value).values()
  }

  [Symbol.iterator] (): IterableIterator<[string, string]> { return this.entries() }

  // Native and lightweight Headers alike are `instanceof Headers`; a subclass keeps the ordinary rule.
  static [Symbol.hasInstance] (value: unknown): boolean {
    if (this === LightweightHeaders) return value instanceof NativeHeaders
    return Function.prototype[Symbol.hasInstance].call(this, value)
  }

  [inspect.custom] (depth: number, options: object): string {
    const shown: Record<string, string | string[]> = {}
    for (const [name, value] of sortedEntries(this)) {
      const existing = shown[name]
      shown[name] = existing === undefined ? value : ([] as string[]).concat(existing, value)
    }
    return `Headers ${inspect(shown, options)}`
  }
}
// `instanceof Headers` and Object.prototype.toString (`[object Headers]`)
// hold; every method a native Headers has is overridden above.
Object.setPrototypeOf(LightweightHeaders.prototype, NativeHeaders.prototype)
Object.setPrototypeOf(LightweightHeaders, NativeHeaders)

/** A native Headers method, for one called through our prototype on a native object. */
function nativeMethod (name: string): (...args: any[]) => any {
  return (NativeHeaders.prototype as unknown as Record<string, (...args: any[]) => any>)[name]
}

export function isLightweightHeaders (value: unknown): value is LightweightHeaders {
  return typeof value === 'object' && value !== null && (value as Partial<LightweightHeaders>)[kList] !== undefined
}

/**
 * The list as it is kept, without sorting: lowercase names, values combined
 * per name, each Set-Cookie apart. Read only: the writers walk it in place.
 */
export function headerList (headers: LightweightHeaders): readonly string[] {
  return listOf(headers)
}

/**
 * A snapshot of the entries, sorted by name as a native Headers iterates
 * them; set-cookie entries one by one, in order (the sort is stable).
 */
function sortedEntries (headers: object): Array<[string, string]> {
  const list = listOf(headers as LightweightHeaders)
  const sorted: Array<[string, string]> = []
  for (let i = 0; i < list.length; i += 2) sorted.push([list[i], list[i + 1]])
  return sorted.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)
}

/** An object a native Headers would read as a record, with nothing exotic about it. */
function isPlainRecord (init: unknown): init is Record<string, unknown> {
  if (typeof init !== 'object' || init === null || Array.isArray(init)) return false
  const proto = Object.getPrototypeOf(init)
  return (proto === Object.prototype || proto === null) && Object.getOwnPropertySymbols(init).length === 0
}

/** An array of [name, value] arrays: what a native Headers reads as a sequence of pairs. */
function isArrayOfPairs (init: unknown): init is Array<[string, string]> {
  if (!Array.isArray(init) || Object.getPrototypeOf(init) !== Array.prototype) return false
  for (let i = 0; i < init.length; i++) {
    const pair: unknown = init[i]
    if (!Array.isArray(pair) || pair.length !== 2 || Object.getPrototypeOf(pair) !== Array.prototype) return false
  }
  return true
}

function requireArguments (method: string, given: number, required: number): void {
  if (given < required) {
    throw new TypeError(`Headers.${method}: ${required} argument${required === 1 ? '' : 's'} required, but only ${given} present.`)
  }
}

/**
 * Names already checked, with their lowercase form: an app uses a handful of
 * names over and over. Bounded: past the limit, names are checked each time.
 */
const checkedNames = new Map<string, string>()
const MAX_CHECKED_NAMES = 512

function checkName (method: string, name: unknown): string {
  if (typeof name === 'string') {
    const known = checkedNames.get(name)
    if (known !== undefined) return known
  }
  const text = byteString(method, name)
  if (!TOKEN.test(text)) throw new TypeError(`Headers.${method}: "${text}" is an invalid header name.`)
  const lower = text.toLowerCase()
  if (typeof name === 'string' && checkedNames.size < MAX_CHECKED_NAMES) checkedNames.set(name, lower)
  return lower
}

/**
 * A header name of a record (a handler's init, as Hono's c.json() gives
 * `Content-Type`) in lowercase: the same string for a name seen before.
 * A string made anew by toLowerCase() on every request is not one V8 has
 * interned, so each use of it as a key of a header record costs a lookup in
 * V8's string table; the string kept here costs that once. Bounded as
 * checkedNames is.
 */
export function lowercaseName (name: string): string {
  const known = lowercaseNames.get(name)
  if (known !== undefined) return known
  const lower = name.toLowerCase()
  if (lowercaseNames.size < MAX_CHECKED_NAMES) lowercaseNames.set(name, lower)
  return lower
}

const lowercaseNames = new Map<string, string>()

/** A value that needs neither trimming nor a closer look: printable, space or tab inside, latin1. */
const PLAIN_VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/

function checkValue (method: string, value: unknown): string {
  if (typeof value === 'string' && PLAIN_VALUE.test(value)) return value
  let text = byteString(method, value)
  const first = text.charCodeAt(0)
  const last = text.charCodeAt(text.length - 1)
  if (first === 32 || first === 9 || first === 10 || first === 13 || last === 32 || last === 9 || last === 10 || last === 13) {
    text = text.replace(SURROUNDING_WHITESPACE, '')
  }
  if (FORBIDDEN_IN_VALUE.test(text)) throw new TypeError(`Headers.${method}: "${text}" is an invalid header value.`)
  return text
}

/** WebIDL's ByteString conversion: ToString, then no character above 0xFF. */
function byteString (method: string, value: unknown): string {
  if (typeof value === 'symbol') throw new TypeError(`Headers.${method}: Cannot convert a Symbol value to a string`)
  const text = typeof value === 'string' ? value : String(value)
  if (NOT_BYTE.test(text)) throw new TypeError(`Headers.${method}: Cannot convert argument to a ByteString because a character has a value greater than 255.`)
  return text
}

/** Sets Content-Type on a lightweight Headers unless it has one: a response's default type, without the checks a literal name needs. */
export function defaultContentType (headers: Headers, value: string): Headers {
  const list = listOf(headers as LightweightHeaders)
  for (let i = 0; i < list.length; i += 2) {
    if (list[i] === 'content-type') return headers
  }
  list.push('content-type', value)
  return headers
}

/** A lightweight copy of `init`, typed as the Headers it stands in for. */
export function copyHeaders (init?: HeadersInit | null): Headers {
  return new LightweightHeaders(init) as Headers
}

/**
 * A request's headers, straight from Node's `rawHeaders` (HTTP/1 or HTTP/2;
 * pseudo-headers left out). Nothing is validated or copied up front: apps
 * read one or two headers per request (`cors()` reads Origin), and a browser
 * sends a dozen. get() and has() scan the raw list (only a valid name can
 * match the checked one asked for) and check each value get() returns as
 * append() would; the first iteration or change builds the list, checking
 * every entry as `new Headers(pairs)` would, TypeError included.
 *
 * Node's parsers rarely hand over anything Headers refuses: llhttp (Node
 * 20–26) admits only token names and strips the whitespace around values.
 * Under --insecure-http-parser, though, a value can hold a NUL: reading that
 * header, or iterating, throws the TypeError that a native Headers throws
 * when it is built.
 */
export function requestHeaders (rawHeaders: readonly string[]): Headers {
  const headers = Object.create(LightweightHeaders.prototype) as LightweightHeaders
  headers[kList] = UNREAD
  headers[kRaw] = rawHeaders
  return headers as Headers
}

function listOf (self: LightweightHeaders): string[] {
  const list = self[kList]
  return list === UNREAD ? readRaw(self) : list
}

/** Builds the list of request headers from the raw ones: appended one by one, checked as append() checks. */
function readRaw (self: LightweightHeaders): string[] {
  const raw = self[kRaw]!
  const list: string[] = []
  self[kList] = list
  self[kRaw] = undefined
  const headers = self
  try {
    for (let i = 0; i < raw.length; i += 2) {
      if (raw[i].charCodeAt(0) !== 58 /* : */) headers.append(raw[i], raw[i + 1])
    }
  } catch (err) {
    // Stay unread, so that every later use fails the same way.
    self[kList] = UNREAD
    self[kRaw] = raw
    throw err
  }
  return list
}

/** The index of the first raw header named `lower` (a lowercase token) at or after `from`, or -1. */
function rawIndexOf (raw: readonly string[], lower: string, from: number): number {
  for (let i = from; i < raw.length; i += 2) {
    const name = raw[i]
    // Compare lengths first: most names differ there, and toLowerCase allocates.
    if (name.length === lower.length && (name === lower || name.toLowerCase() === lower)) return i
  }
  return -1
}

/** get() over the raw headers: every value of that name, each checked, joined as Headers joins them. */
function rawGet (raw: readonly string[], lower: string): string | null {
  let i = rawIndexOf(raw, lower, 0)
  if (i === -1) return null
  let found = checkValue('append', raw[i + 1])
  while ((i = rawIndexOf(raw, lower, i + 2)) !== -1) found += separatorOf(lower) + checkValue('append', raw[i + 1])
  return found
}

/** How appended values of one name combine: Cookie with "; ", as undici does (Node 20–26), all others with ", ". */
function separatorOf (lowerName: string): string {
  return lowerName === 'cookie' ? '; ' : ', '
}
