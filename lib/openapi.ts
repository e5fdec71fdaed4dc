import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { FST_ERR_HONO_INVALID_OPTION } from './errors.js'
import { joinPath } from './request/url.js'

/**
 * The mount in @fastify/swagger's document. Its routes are catch-alls for
 * every method (QUERY included, which OpenAPI 3.0 does not have), so they are
 * always left out. An app that describes itself adds its paths instead, under
 * the mount's prefix, with its components, tags and webhooks.
 *
 * @fastify/swagger builds its document from the routes registered after it,
 * calling each route's `config.swaggerTransform` (9.x; checked on 9.9.3).
 * - Registered before the mount (the order it asks for): the mount's routes
 *   answer that call by hiding themselves, and the first of them to be asked
 *   merges the app's document into the one being built, so the JSON and the
 *   YAML forms both have it.
 * - Registered after the mount: it never sees the mount's routes. When the
 *   server is ready, the mount wraps its `swagger` decorator, so that the
 *   document it returns has the app's paths; the YAML form is then written
 *   as JSON, which is valid YAML 1.2.
 */

/**
 * An OpenAPI 3 document, typed loosely so that the types of any OpenAPI
 * library fit: @hono/zod-openapi's `getOpenAPIDocument()` result, openapi-types'
 * or openapi3-ts' `OpenAPIObject`, a literal.
 */
export interface OpenAPIDocument {
  openapi?: string
  paths?: object
  components?: object
  tags?: ReadonlyArray<{ name: string }>
  security?: readonly object[]
  webhooks?: object
}

/** The same document as this module reads it. */
interface Document {
  openapi?: string
  paths?: Record<string, Record<string, unknown>>
  components?: Record<string, Record<string, unknown>>
  tags?: Array<{ name: string }>
  security?: Array<Record<string, string[]>>
  webhooks?: Record<string, unknown>
}

/** What a document function is told about the document it goes into. */
export interface OpenAPITarget {
  /** The OpenAPI version of @fastify/swagger's document (`'3.0.3'` unless set). */
  openapi: string
  info: { title: string, version: string }
  // Lets it pass for the config of @hono/zod-openapi's getOpenAPIDocument().
  [extension: `x-${string}`]: unknown
}

/**
 * The `openapi` option: the app's document, a function that returns it when
 * @fastify/swagger builds its own (so routes added later are in it), or
 * `true` for an app that can describe itself (@hono/zod-openapi's
 * `OpenAPIHono`: its `getOpenAPIDocument()`, or `getOpenAPI31Document()`
 * when @fastify/swagger's document is OpenAPI 3.1 or later).
 */
export type OpenAPIOption = OpenAPIDocument | ((target: OpenAPITarget) => OpenAPIDocument) | boolean

interface SelfDescribingApp {
  getOpenAPIDocument (config: OpenAPITarget): OpenAPIDocument
  getOpenAPI31Document? (config: OpenAPITarget): OpenAPIDocument
}

/** Checks the option at registration; a function's result is checked when it is called. */
export function checkOpenAPIOption (option: unknown, app: object): void {
  if (option === undefined || option === false || typeof option === 'function') return
  if (option === true) {
    if (typeof (app as Partial<SelfDescribingApp>).getOpenAPIDocument !== 'function') {
      throw new FST_ERR_HONO_INVALID_OPTION('openapi', 'is true, but the app has no getOpenAPIDocument() (an OpenAPIHono app of @hono/zod-openapi has): pass the document itself')
    }
    return
  }
  const problem = documentProblem(option)
  if (problem !== null) throw new FST_ERR_HONO_INVALID_OPTION('openapi', problem)
}

/** What is wrong with a value given as an OpenAPI 3 document, or null. */
function documentProblem (document: unknown): string | null {
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    return `must be an OpenAPI 3 document, a function that returns one, or true, got ${kindOf(document)}`
  }
  const { openapi, swagger, paths, components, tags, webhooks } = document as Record<string, unknown>
  if (swagger !== undefined) return 'must be an OpenAPI 3 document, got a Swagger 2.0 one'
  if (openapi !== undefined && (typeof openapi !== 'string' || !openapi.startsWith('3.'))) {
    return `must be an OpenAPI 3 document, got openapi ${JSON.stringify(openapi)}`
  }
  if (paths !== undefined && !isPlainObject(paths)) return `must have paths as an object, got ${kindOf(paths)}`
  if (components !== undefined && !isPlainObject(components)) return `must have components as an object, got ${kindOf(components)}`
  if (webhooks !== undefined && !isPlainObject(webhooks)) return `must have webhooks as an object, got ${kindOf(webhooks)}`
  if (tags !== undefined && !Array.isArray(tags)) return `must have tags as an array, got ${kindOf(tags)}`
  return null
}

/** What kind of value an invalid document field holds, for the error message. */
function kindOf (value: unknown): string {
  if (Array.isArray(value)) return 'an array'
  if (value === null) return 'null'
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`
}

function isPlainObject (value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

interface MountDocumentation {
  /** For the mount's routes: hides them and merges the app's document. */
  config: { swaggerTransform: (input: { openapiObject?: unknown, swaggerObject?: unknown }) => { schema: { hide: true } } }
}

/**
 * Sets up the mount's part of the document. The app's paths get the mount's
 * prefix, unless the app sees full paths (`stripPrefix: false`): then its
 * paths are full already.
 */
export function documentMount (fastify: FastifyInstance, option: OpenAPIOption | undefined, app: object, stripPrefix: boolean): MountDocumentation {
  const pathPrefix = stripPrefix ? openapiPath(fastify.prefix) : ''
  const merged = new WeakSet<object>()
  const log = fastify.log

  function contribute (target: unknown): void {
    if (option === undefined || option === false || !isPlainObject(target) || merged.has(target)) return
    merged.add(target)
    if (typeof target.openapi !== 'string') {
      log.warn('fastify-hono: @fastify/swagger makes a Swagger 2.0 document, which cannot include the app\'s OpenAPI 3 document; the app\'s paths are left out')
      return
    }
    const document = resolveDocument(option, target as unknown as OpenAPITarget, app)
    mergeDocument(target as Document, document, pathPrefix, log)
  }

  // Was @fastify/swagger there already? Then its onRoute hook sees the routes.
  const swaggerBefore = typeof (fastify as unknown as { swagger?: unknown }).swagger === 'function'
  if (!swaggerBefore && option !== undefined && option !== false) {
    fastify.addHook('onReady', function wrapLateSwagger (done) {
      wrapSwaggerDecorator(fastify, contribute)
      done()
    })
  }

  return {
    config: {
      swaggerTransform ({ openapiObject, swaggerObject }) {
        contribute(openapiObject ?? swaggerObject)
        return { schema: { hide: true } }
      }
    }
  }
}

/**
 * @fastify/swagger registered after the mount: its `swagger` decorator is
 * replaced, on the scope that holds it, by one that merges the app's
 * document into what it returns. Several such mounts wrap in turn.
 */
function wrapSwaggerDecorator (fastify: FastifyInstance, contribute: (document: unknown) => void): void {
  let owner: object | null = fastify
  while (owner !== null && !Object.hasOwn(owner, 'swagger')) owner = Object.getPrototypeOf(owner) as object | null
  if (owner === null) return
  const holder = owner as { swagger: (options?: { yaml?: boolean }) => unknown }
  const original = holder.swagger
  if (typeof original !== 'function') return
  const asYaml = new WeakMap<object, string>()
  holder.swagger = function swagger (this: unknown, options?: { yaml?: boolean }) {
    const document = original.call(this)
    contribute(document)
    if (options?.yaml !== true || !isPlainObject(document)) return document
    let text = asYaml.get(document)
    if (text === undefined) asYaml.set(document, text = JSON.stringify(document, null, 2))
    return text
  }
}

function resolveDocument (option: OpenAPIOption, target: OpenAPITarget, app: object): Document {
  let document: unknown = option
  const config: OpenAPITarget = { openapi: target.openapi, info: target.info }
  if (option === true) {
    const self = app as SelfDescribingApp
    document = !target.openapi.startsWith('3.0') && typeof self.getOpenAPI31Document === 'function'
      ? self.getOpenAPI31Document(config)
      : self.getOpenAPIDocument(config)
  } else if (typeof option === 'function') {
    document = option(config)
  }
  const problem = documentProblem(document)
  if (problem !== null) throw new FST_ERR_HONO_INVALID_OPTION('openapi', (option === true ? 'is true, and the app\'s document ' : 'returned a value that ') + problem)
  return document as Document
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace', 'query'])

/**
 * Merges the app's document into Fastify's. Where both have something of the
 * same name, Fastify's stays: an operation (Fastify's route answers it, see
 * docs/migration.md), a tag, a webhook. A component of the same name and a
 * different content is added under a new name, `Name_2`, and the app's
 * references to it follow. Each of these is logged as a warning.
 */
function mergeDocument (target: Document, source: Document, pathPrefix: string, log: Pick<FastifyBaseLogger, 'warn'>): void {
  // A copy, so the user's document is never changed: an OpenAPI document is JSON.
  const document = JSON.parse(JSON.stringify(source)) as Document
  const targetVersion = (target.openapi ?? '').split('.').slice(0, 2).join('.')
  const sourceVersion = (document.openapi ?? '').split('.').slice(0, 2).join('.')
  if (sourceVersion !== '' && sourceVersion !== targetVersion) {
    log.warn(`fastify-hono: the app's document is OpenAPI ${document.openapi}, @fastify/swagger's is ${target.openapi}: their schemas may not mean the same`)
  }

  // Components: names first, so that references can follow a renaming.
  const refRenames = new Map<string, string>()
  const securityRenames = new Map<string, string>()
  const components: Array<[string, string, unknown]> = []
  for (const [kind, entries] of Object.entries(document.components ?? {})) {
    if (!isPlainObject(entries)) continue
    const existing: Record<string, unknown> = target.components?.[kind] ?? {}
    for (const [name, value] of Object.entries(entries)) {
      if (!Object.hasOwn(existing, name)) {
        components.push([kind, name, value])
      } else if (!sameJson(existing[name], value)) {
        let n = 2
        while (Object.hasOwn(existing, `${name}_${n}`) || Object.hasOwn(entries, `${name}_${n}`)) n++
        const renamed = `${name}_${n}`
        log.warn(`fastify-hono: components.${kind}.${name} differs from Fastify's; the app's is added as ${renamed}`)
        refRenames.set(`#/components/${kind}/${name}`, `#/components/${kind}/${renamed}`)
        if (kind === 'securitySchemes') securityRenames.set(name, renamed)
        components.push([kind, renamed, value])
      }
    }
  }
  if (refRenames.size > 0) renameRefs(document, refRenames)
  if (components.length > 0) {
    target.components ??= {}
    for (const [kind, name, value] of components) (target.components[kind] ??= {})[name] = value
  }

  // Operations: the app's top-level security applies to its own operations only.
  const paths = (target.paths ??= {})
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!isPlainObject(item)) continue
    for (const [key, operation] of Object.entries(item)) {
      if (!METHODS.has(key) || !isPlainObject(operation)) continue
      if (operation.security === undefined && document.security !== undefined) operation.security = JSON.parse(JSON.stringify(document.security))
      if (securityRenames.size > 0 && Array.isArray(operation.security)) operation.security = operation.security.map((requirement: Record<string, string[]>) => renameKeys(requirement, securityRenames))
    }
    const fullPath = joinPath(pathPrefix, openapiPath(path))
    const into = paths[fullPath]
    if (into === undefined) {
      paths[fullPath] = item
      continue
    }
    for (const [key, value] of Object.entries(item)) {
      if (!Object.hasOwn(into, key)) {
        into[key] = value
      } else if (METHODS.has(key)) {
        log.warn(`fastify-hono: ${key.toUpperCase()} ${fullPath} is in Fastify's document already; Fastify's route answers it, and its operation stays`)
      }
    }
  }

  for (const tag of document.tags ?? []) {
    const tags = (target.tags ??= [])
    if (!tags.some((existing) => existing.name === tag.name)) tags.push(tag)
  }
  const webhookNames = Object.keys(document.webhooks ?? {})
  if (webhookNames.length > 0 && targetVersion === '3.0') {
    log.warn(`fastify-hono: OpenAPI 3.0 has no webhooks; the app's (${webhookNames.join(', ')}) are left out`)
    return
  }
  for (const name of webhookNames) {
    const webhooks = (target.webhooks ??= {})
    if (Object.hasOwn(webhooks, name)) log.warn(`fastify-hono: webhook ${name} is in Fastify's document already; Fastify's stays`)
    else webhooks[name] = document.webhooks?.[name]
  }
}

function sameJson (a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

function renameRefs (value: unknown, renames: Map<string, string>): void {
  if (Array.isArray(value)) {
    for (const item of value) renameRefs(item, renames)
  } else if (isPlainObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') {
        const renamed = renames.get(child)
        if (renamed !== undefined) value[key] = renamed
      } else {
        renameRefs(child, renames)
      }
    }
  }
}

function renameKeys (requirement: Record<string, string[]>, renames: Map<string, string>): Record<string, string[]> {
  const renamed: Record<string, string[]> = {}
  for (const [name, scopes] of Object.entries(requirement)) renamed[renames.get(name) ?? name] = scopes
  return renamed
}

/**
 * A route path in OpenAPI's form: Fastify's `:id` or `:id(^\\d+$)` and Hono's
 * `:id`, `:id{[0-9]+}` or `:id?` become `{id}`; Fastify's `::` is a colon.
 */
function openapiPath (path: string): string {
  let out = ''
  for (let i = 0; i < path.length; i++) {
    const char = path[i]
    if (char !== ':') {
      out += char
      continue
    }
    if (path[i + 1] === ':') {
      out += ':'
      i++
      continue
    }
    let end = i + 1
    while (end < path.length && /[\w$]/.test(path[end])) end++
    const name = path.slice(i + 1, end)
    // Skip a pattern, `(…)` or `{…}`, nesting included, and an optional `?`.
    const open = path[end]
    if (open === '(' || open === '{') {
      const close = open === '(' ? ')' : '}'
      let depth = 0
      for (; end < path.length; end++) {
        if (path[end] === '\\') end++
        else if (path[end] === open) depth++
        else if (path[end] === close && --depth === 0) { end++; break }
      }
    }
    if (path[end] === '?') end++
    out += `{${name}}`
    i = end - 1
  }
  return out
}
