import type { FastifyRequest } from 'fastify'
import { FST_ERR_HONO_BAD_REQUEST } from '../errors.js'

/** How a mount turns the request target into the path its app sees. */
export interface Mount {
  /** Path segments in the mount prefix (`/api/v2` → 2); `/` and no prefix → 0. */
  readonly segments: number
  /** The prefix written in canonical form, used when the app sees the full path; null if it has params. */
  readonly canonicalPrefix: string | null
  readonly stripPrefix: boolean
}

export function createMount (prefix: string, stripPrefix: boolean): Mount {
  const parts = prefix.split('/').filter((part) => part !== '')
  const hasParams = parts.some((part) => part.includes(':') || part.includes('*'))
  return {
    segments: parts.length,
    canonicalPrefix: hasParams ? null : parts.map((part) => '/' + part).join(''),
    stripPrefix
  }
}

/**
 * The origin-form target (`/path?query`) of the request, read the way
 * find-my-way 9.x reads it (checked on 9.10), so that what the app sees is
 * what the router matched: an absolute-form target (`http://host/p?q`) keeps
 * only its path and query; its authority never reaches the app.
 */
export function originForm (target: string): string {
  if (target.charCodeAt(0) === 47 /* / */) return target
  const schemeEnd = target.indexOf('://')
  const scheme = schemeEnd === -1 ? '' : target.slice(0, schemeEnd).toLowerCase()
  if (scheme !== 'http' && scheme !== 'https') throw new FST_ERR_HONO_BAD_REQUEST('Invalid request target')
  const authorityStart = schemeEnd + 3
  const pathStart = target.indexOf('/', authorityStart)
  const queryStart = target.indexOf('?', authorityStart)
  if (queryStart !== -1 && (pathStart === -1 || queryStart < pathStart)) return '/' + target.slice(queryStart)
  return pathStart === -1 ? '/' : target.slice(pathStart)
}

/**
 * A mount prefix and one of the app's route paths, as one path: the app's
 * `/` is the prefix itself (`/v2` and `/users/:id` → `/v2/users/:id`).
 */
export function joinPath (prefix: string, path: string): string {
  let end = prefix.length
  while (end > 0 && prefix.charCodeAt(end - 1) === 47 /* / */) end--
  const base = prefix.slice(0, end)
  if (path === '' || path === '/') return base === '' ? '/' : base
  return base + (path.charCodeAt(0) === 47 ? path : '/' + path)
}

/** Where the path of an origin-form target ends: at its query or fragment, or at its end. */
export function pathEnd (target: string): number {
  let end = target.length
  const query = target.indexOf('?')
  if (query !== -1) end = query
  const hash = target.indexOf('#')
  if (hash !== -1 && hash < end) end = hash
  return end
}

/**
 * The path and query the mounted app sees. The prefix is removed by counting
 * segments of the raw target, not by comparing text: the router has already
 * matched it, possibly percent-encoded (`/%76%32`) or in another case
 * (`caseSensitive: false`), so the rest is passed on exactly as sent and
 * never mixes decoded and raw parts.
 */
export function appPath (target: string, mount: Mount): string {
  const path = originForm(target)
  if (mount.segments === 0) return path
  const end = pathEnd(path)

  // Skip `segments` segments; runs of slashes count as one (ignoreDuplicateSlashes).
  let at = 0
  for (let i = 0; i < mount.segments; i++) {
    while (at < end && path.charCodeAt(at) === 47) at++
    const next = path.indexOf('/', at)
    at = next === -1 || next > end ? end : next
  }
  const rest = path.slice(at)
  if (!mount.stripPrefix) return mount.canonicalPrefix === null ? path : mount.canonicalPrefix + rest
  return rest.charCodeAt(0) === 47 ? rest : '/' + rest
}

// A host is a reg-name, IPv4 or bracketed IPv6 literal, with an optional port:
// nothing that could end the authority (`/`, `?`, `#`, `@`, `\`) or add a userinfo.
const validHost = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=%]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/

/**
 * The absolute URL the app sees: Fastify's `request.protocol` and
 * `request.host` (so `trustProxy` applies) and the app's path (appPath). A
 * host that is missing (HTTP/1.0) falls back to the address the connection
 * came in on; a host that is malformed answers 400 rather than change what
 * the URL means. Made in two parts: plainUrl, for the most common case (the
 * last origin again and a plain path), which returns the origin and the path
 * as they are, or undefined, and then originAndPath. plainUrl is small, for
 * V8 to inline it into the mount's handler.
 */
export function plainUrl (request: FastifyRequest, path: string): string | undefined {
  const host = request.host
  if (host === lastHost && request.protocol === lastProtocol && lastOrigin !== undefined && isPlainPath(path)) return lastOrigin + path
  return undefined
}

/** The URL the app sees, for a path (appPath) that plainUrl did not take. */
export function originAndPath (request: FastifyRequest, path: string): string {
  let protocol = request.protocol
  if (protocol !== 'http' && protocol !== 'https') {
    protocol = (request.raw.socket as { encrypted?: boolean } | null)?.encrypted === true ? 'https' : 'http'
  }
  // Fastify 5.0 leaves `request.host` undefined for a missing Host; 5.2+ gives ''.
  const host = request.host ?? ''
  // Most requests repeat the last origin: reuse its verdict.
  let origin: string | undefined
  if (host === lastHost && protocol === lastProtocol) {
    origin = lastOrigin
  } else if (host === '') {
    origin = checkedOrigin(protocol, localAuthority(request)) // per connection: not cached
  } else {
    origin = checkedOrigin(protocol, host)
    lastHost = host
    lastProtocol = protocol
    lastOrigin = origin
  }
  if (origin !== undefined && isPlainPath(path)) return origin + path
  refuseRewrittenPath(path)
  // What a native Request would make of it: a lowercased or IDNA host, no
  // default port, some characters percent-encoded.
  try {
    return new URL(protocol + '://' + (host === '' ? localAuthority(request) : host) + path).href
  } catch (err) {
    throw new FST_ERR_HONO_BAD_REQUEST('Invalid request URL', { cause: err })
  }
}

/**
 * Refuses (400) a path the URL parser would turn into another path than the
 * one Fastify's router matched and its hooks saw: a backslash before the
 * query (the parser reads it as `/`), or a `.` or `..` segment (also
 * written `%2e`), which it resolves. `/v2/x/../admin` and `/v2/x\..\admin`
 * would otherwise reach the app as `/admin` behind a hook that guards
 * `/v2/admin`; Fastify's own routes never match them. @hono/node-server
 * answers 400 to the backslash too (2.1.6); it resolves dot segments.
 * Runs only for paths that are not plain (isPlainPath).
 */
function refuseRewrittenPath (path: string): void {
  let end = path.length
  const query = path.indexOf('?')
  if (query !== -1) end = query
  const hash = path.indexOf('#')
  if (hash !== -1 && hash < end) end = hash
  const pathPart = end === path.length ? path : path.slice(0, end)
  if (pathPart.includes('\\')) throw new FST_ERR_HONO_BAD_REQUEST('Invalid request target: a backslash in the path')
  if (hasDotSegment(pathPart)) throw new FST_ERR_HONO_BAD_REQUEST('Invalid request target: a dot segment in the path')
}

let lastHost: string | undefined
let lastProtocol: string | undefined
let lastOrigin: string | undefined

/**
 * `protocol://host` when the host is already in the form the URL parser
 * would give it; undefined when it must go through the parser. Throws 400
 * for a host that could change what the URL means.
 */
function checkedOrigin (protocol: string, host: string): string | undefined {
  const match = validHost.exec(host)
  if (match === null || (match[1] !== undefined && Number(match[1]) > 65535)) throw new FST_ERR_HONO_BAD_REQUEST('Invalid Host header')
  return isPlainHost(host, protocol) ? protocol + '://' + host : undefined
}

// Already in the form the WHATWG URL parser would produce, so the lightweight
// Request can keep the string as it is (most requests): a lowercase name
// whose last label starts with a letter, or a canonical IPv4 address, and no
// default port.
const plainName = /^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?(?::[1-9]\d{0,4})?$/
const lastLabelIsName = /(?:^|\.)[a-z][a-z0-9-]*\.?(?::\d+)?$/
const canonicalIPv4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?::[1-9]\d{0,4})?$/
function isPlainHost (host: string, protocol: string): boolean {
  if (!plainName.test(host) || !(lastLabelIsName.test(host) || canonicalIPv4.test(host))) return false
  // Punycode labels are checked by the URL parser (whose verdict differs by Node version).
  if (host.includes('xn--')) return false
  return !host.endsWith(protocol === 'http' ? ':80' : ':443')
}
/**
 * Whether the URL parser would keep this path and query exactly as they are:
 * only characters it never percent-encodes or rewrites (for http and https),
 * and no `.` or `..` segment (also spelled `%2e`), which it would resolve.
 * One pass over a lookup table rather than two regular expressions: it runs
 * on every request, and takes about a third of their time on short paths
 * (Node 24).
 */
function isPlainPath (path: string): boolean {
  const length = path.length
  if (length === 0 || path.charCodeAt(0) !== SLASH) return false
  let mayHaveDotSegment = false
  let previous = SLASH
  for (let i = 1; i < length; i++) {
    const code = path.charCodeAt(i)
    if (code > 127 || PATH_CHARACTERS[code] === 0) return false
    // A dot segment starts right after a `/` with `.` or `%`.
    if (previous === SLASH && (code === DOT || code === PERCENT)) mayHaveDotSegment = true
    previous = code
  }
  return !mayHaveDotSegment || !hasDotSegment(path)
}

const SLASH = 47
const QUESTION_MARK = 63
const DOT = 46
const PERCENT = 37

// The unreserved and sub-delimiter characters, `:`, `@`, `%`, `/` and `?`.
// Not `'`: the parser percent-encodes it in the query of http and https URLs.
const PATH_CHARACTERS = new Uint8Array(128)
for (const character of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&()*+,;=:@%/?') {
  PATH_CHARACTERS[character.charCodeAt(0)] = 1
}

/**
 * Whether a segment is `.` or `..`: it starts after a `/` (in the query too,
 * to err on the side of the parser) and ends at `/`, `?` or the end.
 */
function hasDotSegment (path: string): boolean {
  let start = 1
  for (let i = 1; i <= path.length; i++) {
    const code = i === path.length ? SLASH : path.charCodeAt(i)
    if (code !== SLASH && code !== QUESTION_MARK) continue
    if (start !== -1 && isDotSegment(path, start, i)) return true
    start = code === SLASH ? i + 1 : -1
  }
  return false
}

/** Whether path[start, end) is one or two dots, each possibly written `%2e` or `%2E`. */
function isDotSegment (path: string, start: number, end: number): boolean {
  let at = start
  let dots = 0
  while (at < end && dots < 3) {
    if (path.charCodeAt(at) === DOT) {
      at += 1
    } else if (path.charCodeAt(at) === PERCENT && path.charCodeAt(at + 1) === 50 /* 2 */ && (path.charCodeAt(at + 2) | 0x20) === 101 /* e */) {
      at += 3
    } else {
      return false
    }
    dots++
  }
  return at === end && dots >= 1 && dots <= 2
}

function localAuthority (request: FastifyRequest): string {
  const socket = request.raw.socket
  const address = socket?.localAddress
  if (address === undefined) return 'localhost'
  const port = socket.localPort === undefined ? '' : ':' + socket.localPort
  return (address.includes(':') ? '[' + address + ']' : address) + port
}
