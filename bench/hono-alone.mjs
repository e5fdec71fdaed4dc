// The benchmark app's own cost, with no server around it: `node
// bench/hono-alone.mjs [--cases=param,middleware] [--rounds=9] [--native]
// [--resources=16]`.
// Calls app.fetch() in process with one prebuilt Request per case and waits
// for each Response, with fastify-hono's lightweight Request, Response and
// Headers installed as globals (as the plugin installs them; --native keeps
// the native classes). What a case costs here is Hono's router, Context,
// middleware and handler plus the response copies Hono asks for: a floor
// under what any server pays for that case. The difference between two
// cases is a lower bound on the difference over HTTP, where the kernel adds
// to it. Prints the median CPU µs per request of each case, and the median
// per-round difference of each case from the first.
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'
import { createApp } from './app.mjs'
import { caseById } from './cases.mjs'
import { PREFIX, RESOURCES } from './payloads.mjs'

const { values: args } = parseArgs({
  options: {
    cases: { type: 'string', default: 'param,middleware' },
    rounds: { type: 'string', default: '9' },
    requests: { type: 'string', default: '200000' },
    native: { type: 'boolean', default: false },
    resources: { type: 'string', default: String(RESOURCES.length) }
  }
})
const rounds = Number(args.rounds)
const requests = Number(args.requests)
if (!Number.isInteger(rounds) || rounds < 3) throw new Error(`--rounds must be an integer of at least 3, not ${args.rounds}`)
if (!Number.isInteger(requests) || requests < 1000) throw new Error(`--requests must be an integer of at least 1000, not ${args.requests}`)

if (!args.native) {
  // dist/ is CommonJS; the globals module has no side effects until called.
  const { installLightweightGlobals } = createRequire(import.meta.url)('../dist/web/globals.js')
  installLightweightGlobals()
}

const resources = Number(args.resources)
if (!Number.isInteger(resources) || resources < 1 || resources > RESOURCES.length) throw new Error(`--resources must be an integer from 1 to ${RESOURCES.length}, not ${args.resources}`)
// Fewer resources, fewer parameter routes: what the app's size does to
// Hono's router (RegExpRouter matches all of them with one expression).
const app = createApp(RESOURCES.slice(0, resources))
const cases = args.cases.split(',').map((id) => {
  const found = caseById(id)
  if (found.method !== 'GET' || found.mixed) throw new Error(`${id}: only single-path GET cases run here`)
  // The app's routes are at its root; the servers mount it under PREFIX.
  return { id, request: new Request('http://localhost' + found.path.slice(PREFIX.length)) }
})

async function cpuPerRequest (request) {
  const start = process.cpuUsage()
  for (let i = 0; i < requests; i++) {
    let response = app.fetch(request, {})
    if (typeof response.then === 'function') response = await response
    if (response.status !== 200) throw new Error(`${request.url}: status ${response.status}`)
  }
  const used = process.cpuUsage(start)
  return (used.user + used.system) / requests
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1]
for (const { request } of cases) await cpuPerRequest(request) // warm-up
const samples = cases.map(() => [])
for (let round = 0; round < rounds; round++) {
  for (let i = 0; i < cases.length; i++) samples[i].push(await cpuPerRequest(cases[i].request))
}
console.log(`Node ${process.versions.node}, ${args.native ? 'native' : 'lightweight'} classes, ${resources * 2} parameter routes, ${rounds} rounds of ${requests} requests`)
for (let i = 0; i < cases.length; i++) {
  const differences = samples[i].map((value, round) => value - samples[0][round])
  const extra = i === 0 ? '' : `, ${median(differences) >= 0 ? '+' : ''}${median(differences).toFixed(2)} µs over ${cases[0].id}`
  console.log(`${cases[i].id}: ${median(samples[i]).toFixed(2)} µs per request${extra}`)
}
