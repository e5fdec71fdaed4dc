// The variants, in the order they run and are reported. Each one is a module
// under servers/ exporting createServer(): an http.Server, not yet listening.
// They must each run in their own process: @hono/node-server (and possibly
// fastify-hono) replace the global Request and Response.
// Optional fields: `cases`, the only cases a variant serves (the others are
// skipped); `baseline`, the variant its "× Fastify" ratios divide by, when
// not BASELINE; `checkedAgainst`, the variant its response checks compare
// with, when not @hono/node-server (status and body must match; header
// differences are listed).

import { AB_CASES, AB_STACK_CASES, BASE_STACK_VARIANT, BASE_VARIANT, tickObjectModule } from './base.mjs'
import { HEADERS_CASES, STACK_CASES } from './cases.mjs'

export const BASELINE = 'fastify'

export const variants = [
  { id: 'node-http', label: 'node:http by hand', module: './servers/node-http.mjs' },
  { id: 'fastify', label: 'Fastify route', module: './servers/fastify-plain.mjs' },
  { id: 'node-server', label: '@hono/node-server', module: './servers/node-server.mjs', hono: true },
  { id: 'hijack', label: 'Fastify + hijack', module: './servers/fastify-hijack.mjs', hono: true },
  { id: 'naive', label: 'Fastify + send(Response)', module: './servers/fastify-naive.mjs', hono: true },
  { id: 'fastify-hono', label: 'fastify-hono', module: './servers/fastify-hono.mjs', hono: true },
  { id: 'fastify-hono-onsend', label: 'fastify-hono + onSend', module: './servers/fastify-hono-onsend.mjs', hono: true },
  // The production stack (stack.mjs): cookie, compress, helmet, cors and
  // rate-limit, or Hono's nearest middleware. Ratios against fastify-stack.
  { id: 'fastify-stack', label: 'Fastify route, stack', module: './servers/fastify-stack.mjs', cases: STACK_CASES, baseline: 'fastify-stack' },
  { id: 'fastify-hono-stack', label: 'fastify-hono, stack', module: './servers/fastify-hono-stack.mjs', hono: true, cases: STACK_CASES, baseline: 'fastify-stack', checkedAgainst: 'fastify-stack' },
  { id: 'node-server-stack', label: '@hono/node-server, Hono middleware', module: './servers/node-server-stack.mjs', hono: true, cases: STACK_CASES, baseline: 'fastify-stack', checkedAgainst: 'fastify-stack' }
]

// Reference variants, not run by default: each serves only the cases listed,
// for targets.mjs to split a ratio into its parts or to compare two builds
// of the plugin (or `run.mjs --variants=` with those cases). The base variant
// needs a build of an earlier commit, which `targets.mjs --base=` makes.
// `sameAs`: the variant whose responses it must match byte for byte
// (targets.mjs checks). The two `-headers` variants are the stack without
// its onSend hooks (helmet, cors and rate-limit only).
export const referenceVariants = [
  { id: 'fastify-hono-bare', label: 'fastify-hono, bare fetch (no Hono)', module: './servers/fastify-hono-bare.mjs', cases: ['text', 'json'], sameAs: 'fastify-hono' },
  { id: BASE_VARIANT, label: 'fastify-hono at the base commit', module: './servers/fastify-hono-base.mjs', cases: AB_CASES, sameAs: 'fastify-hono' },
  { id: BASE_STACK_VARIANT, label: 'fastify-hono at the base commit, stack', module: './servers/fastify-hono-base-stack.mjs', cases: AB_STACK_CASES, sameAs: 'fastify-hono-stack' },
  { id: 'fastify-hono-floor-stack', label: 'Fastify route + Hono app.fetch, stack (the floor)', module: './servers/fastify-hono-floor-stack.mjs', hono: true, cases: ['text', 'json', 'param', 'mixed'], sameAs: 'fastify-stack', baseline: 'fastify-stack' },
  { id: 'fastify-stack-globals', label: 'Fastify route, stack, fastify-hono\'s classes as globals', module: './servers/fastify-stack-globals.mjs', cases: ['text', 'json', 'param', 'mixed'], sameAs: 'fastify-stack', baseline: 'fastify-stack' },
  { id: 'fastify-hono-stack-split', label: 'fastify-hono, stack, one mount per resource', module: './servers/fastify-hono-stack-split.mjs', hono: true, cases: ['param'], sameAs: 'fastify-hono-stack', baseline: 'fastify-stack' },
  { id: 'fastify-headers', label: 'Fastify route, helmet + cors + rate-limit', module: './servers/fastify-headers.mjs', cases: HEADERS_CASES, baseline: 'fastify-headers' },
  { id: 'fastify-hono-headers', label: 'fastify-hono, helmet + cors + rate-limit', module: './servers/fastify-hono-headers.mjs', hono: true, cases: HEADERS_CASES, baseline: 'fastify-headers', checkedAgainst: 'fastify-headers' },
  // targets.mjs' migration group: Fastify routes with Hono twins, without and with the migration option.
  { id: 'fastify-twin', label: 'Fastify routes beside their Hono twins', module: './servers/fastify-twin.mjs', cases: ['text', 'json'] },
  { id: 'fastify-twin-mirror', label: 'the same, GET json mirrored', module: './servers/fastify-twin-mirror.mjs', cases: ['text', 'json'], sameAs: 'fastify-twin' },
  { id: 'fastify-twin-share', label: 'the same, a 0% share on GET text', module: './servers/fastify-twin-share.mjs', cases: ['text', 'json'], sameAs: 'fastify-twin' },
  { id: 'fastify-twin-mirror-10', label: 'the same, GET json mirrored on a 10% sample', module: './servers/fastify-twin-mirror-10.mjs', cases: ['text', 'json'], sameAs: 'fastify-twin' }
]

/** Whether `variant` serves `caseId`. */
export function serves (variant, caseId) {
  return variant.cases === undefined || variant.cases.includes(caseId)
}

export function variantById (id) {
  const variant = variants.find((v) => v.id === id) ?? referenceVariants.find((v) => v.id === id)
  if (variant === undefined) {
    const known = [...variants, ...referenceVariants].map((v) => v.id).join(', ')
    throw new Error(`Unknown variant "${id}" (known: ${known})`)
  }
  return variant
}

/** Loads a variant's createServer in this process. */
export async function loadVariant (id) {
  const { createServer } = await import(new URL(variantById(id).module, import.meta.url))
  return createServer
}

/**
 * A variant's server, in this process, listening on a free port of
 * 127.0.0.1, with a count of the requests it has served
 * (`served.requests`). Every variant gets what fastify-hono does for itself
 * (lib/internals/tick-object.ts): on Node 20 and 22 any server process can
 * fall into the process.nextTick cliff (about 5 µs per request) at its
 * first requests, and a baseline that fell into it while fastify-hono did
 * not would flatter every ratio. The base variants (targets.mjs --base=) use
 * their own build's function, which their plugin calls too, so that each
 * holds one tick object like the others.
 */
export async function startVariant (id) {
  const { keepTickObjectAlive } = await import(tickObjectModule(id))
  keepTickObjectAlive()
  const createServer = await loadVariant(id)
  const server = await createServer()
  const served = { requests: 0 }
  server.on('request', () => { served.requests++ })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  return { server, served }
}
