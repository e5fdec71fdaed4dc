import type { FastifyRequest } from 'fastify'
import { badRequest } from './errors.js'

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
  if (scheme !== 'http' && scheme !== 'https') throw badRequest('Invalid request target')
  const authorityStart = schemeEnd + 3
  const pathStart = target.indexOf('/', authorityStart)
  const queryStart = target.indexOf('?', authorityStart)
  if (queryStart !== -1 && (pathStart === -1 || queryStart < pathStart)) return '/' + target.slice(queryStart)
  return pathStart === -1 ? '/' : target.slice(pathStart)
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
  let end = path.length
  const query = path.indexOf('?')
  if (query !== -1) end = query
  const hash = path.indexOf('#')
  if (hash !== -1 && hash < end) end = hash

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
 * `request.host` (so `trustProxy` applies) and the app's path. A host that is
 * missing (HTTP/1.0) falls back to the address the connection came in on; a
 * host that is malformed answers 400 rather than change what the URL means.
 */
export function requestUrl (request: FastifyRequest, mount: Mount): string {
  let protocol = request.protocol
  if (protocol !== 'http' && protocol !== 'https') {
    protocol = (request.raw.socket as { encrypted?: boolean } | null)?.encrypted === true ? 'https' : 'http'
  }
  const host = request.host
  const path = appPath(request.url, mount)
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
  if (origin !== undefined && plainPath.test(path) && !dotSegment.test(path)) return origin + path
  // What a native Request would make of it: a lowercased or IDNA host, no
  // default port, dot segments resolved, some characters percent-encoded.
  try {
    return new URL(protocol + '://' + (host === '' ? localAuthority(request) : host) + path).href
  } catch (err) {
    throw badRequest('Invalid request URL', err)
  }
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
  if (match === null || (match[1] !== undefined && Number(match[1]) > 65535)) throw badRequest('Invalid Host header')
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
const plainPath = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@/?%]*$/
// `.`, `..` and their encoded forms as a whole segment; `\` counts as `/`.
const dotSegment = /(?:^|[/\\])(?:\.|%2e){1,2}(?:[/\\?#]|$)/i

function localAuthority (request: FastifyRequest): string {
  const socket = request.raw.socket
  const address = socket?.localAddress
  if (address === undefined) return 'localhost'
  const port = socket.localPort === undefined ? '' : ':' + socket.localPort
  return (address.includes(':') ? '[' + address + ']' : address) + port
}
