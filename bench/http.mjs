// The HTTP benchmark: each variant's server in its own process on one core,
// autocannon in another on the other core, variants interleaved round by
// round. The figure is the server's CPU time per request over each window.
import { fileURLToPath } from 'node:url'
import { compare, isUsable, probe, probes } from './check.mjs'
import { startChild } from './proc.mjs'
import { serves } from './variants.mjs'

const serverScript = fileURLToPath(new URL('./server.mjs', import.meta.url))
const loaderScript = fileURLToPath(new URL('./loader.mjs', import.meta.url))
// The probes compare every response with Hono's own adapter, or with the
// variant's `checkedAgainst` (the stack variants: Fastify under the same stack).
const REFERENCE = 'node-server'

async function startServers (variants, core) {
  const servers = new Map()
  await Promise.all(variants.map(async (variant) => {
    const handle = startChild(serverScript, [variant.id], core)
    const { port } = await handle.call({ type: 'address' }, 30_000)
    servers.set(variant.id, { ...handle, port })
  }))
  return servers
}

async function runChecks (servers, variants, cases, log) {
  const checks = []
  if (!variants.some((v) => v.id !== REFERENCE && servers.has(v.checkedAgainst ?? REFERENCE))) {
    log(`(no response checks: they compare with ${REFERENCE}, which is not running)`)
    return checks
  }
  const selected = probes.filter((p) => p.caseId === undefined || cases.some((c) => c.id === p.caseId))
  for (const p of selected) {
    const responses = new Map()
    for (const variant of variants) {
      // A variant that serves only some cases is probed on those only.
      if (p.caseId !== undefined ? !serves(variant, p.caseId) : variant.cases !== undefined) continue
      responses.set(variant.id, await probe(servers.get(variant.id).port, p).catch((err) => ({ status: 0, headers: {}, body: Buffer.from(String(err)) })))
    }
    for (const variant of variants) {
      const response = responses.get(variant.id)
      if (variant.id === REFERENCE || response === undefined) continue
      const against = responses.has(variant.checkedAgainst) ? variant.checkedAgainst : REFERENCE
      const reference = responses.get(against)
      if (reference === undefined) continue
      // Only the benchmarked requests must match for their figures to mean anything.
      const usable = p.caseId === undefined ? undefined : isUsable(reference, response)
      checks.push({ variant: variant.id, probe: p.id, against, status: response.status, notes: compare(reference, response), usable })
    }
  }
  return checks
}

/**
 * One cell: an optional warm-up load, then the measured window; the
 * server's CPU per request over exactly that window. Also used by targets.mjs.
 */
export async function measureCell (server, loader, caseId, settings) {
  const request = { type: 'load', port: server.port, caseId, connections: settings.connections }
  if (settings.warmup > 0) await loader.call({ ...request, duration: settings.warmup })
  const before = await server.call({ type: 'snapshot' })
  const load = await loader.call({ ...request, duration: settings.duration })
  const after = await server.call({ type: 'snapshot' })
  const cpuMicros = (after.cpu.user - before.cpu.user) + (after.cpu.system - before.cpu.system)
  const served = after.requests - before.requests
  // The collections in the window (server.mjs counts them).
  const gc = { scavenges: after.gc.scavenges - before.gc.scavenges, scavengeMs: after.gc.scavengeMs - before.gc.scavengeMs, majors: after.gc.majors - before.gc.majors, majorMs: after.gc.majorMs - before.gc.majorMs }
  const perRequest = (micros) => served > 0 ? micros / served : NaN
  return {
    ...load,
    served,
    cpuPerRequest: perRequest(cpuMicros),
    userPerRequest: perRequest(after.cpu.user - before.cpu.user),
    systemPerRequest: perRequest(after.cpu.system - before.cpu.system),
    rss: after.rss,
    gc,
    youngBytes: after.youngBytes
  }
}

/** The value at quantile `q` (0 to 1) of `sorted`, ascending, interpolated between neighbours. */
export function quantile (sorted, q) {
  const at = (sorted.length - 1) * q
  const low = Math.floor(at)
  return sorted[low] + (sorted[Math.ceil(at)] - sorted[low]) * (at - low)
}

/**
 * One server's cells (of one case) summed up: the medians of its CPU, user
 * and system µs per request and of its requests per second, and its garbage
 * collection over all of them per request. A process V8 put into a state
 * that costs more (allocation sites it decided to pretenure fill the old
 * generation: more expensive scavenges and a full collection every few
 * thousand requests) shows in the last four, where its CPU time alone
 * cannot tell it from slower code.
 */
export function summarizeCells (cells) {
  const median = (pick) => quantile(cells.map(pick).sort((a, b) => a - b), 0.5)
  const total = (pick) => cells.reduce((sum, cell) => sum + pick(cell), 0)
  const requests = total((cell) => cell.served)
  const majors = total((cell) => cell.gc.majors)
  return {
    cpu: median((cell) => cell.cpuPerRequest),
    user: median((cell) => cell.userPerRequest),
    system: median((cell) => cell.systemPerRequest),
    rps: median((cell) => cell.rps),
    scavengesPer1000: total((cell) => cell.gc.scavenges) * 1000 / requests,
    scavengeMicros: total((cell) => cell.gc.scavengeMs) * 1000 / requests,
    majors,
    majorsPer10k: majors * 10_000 / requests,
    majorMicros: total((cell) => cell.gc.majorMs) * 1000 / requests
  }
}

/** The initial warm-up: every case mixed, counted in requests (a cold server is 3–4× costlier). */
async function warmUp (servers, variants, load, cases, settings, log) {
  for (const variant of variants) {
    const id = variant.id
    const caseIds = cases.filter((c) => serves(variant, c.id)).map((c) => c.id)
    if (caseIds.length === 0) continue
    const warm = await load.call({ type: 'load', port: servers.get(id).port, caseIds, connections: settings.connections, amount: settings.initialWarmup.requests, maxSeconds: settings.initialWarmup.maxSeconds })
    if (warm.non2xx > 0 || warm.errors > 0) log(`! ${id} warm-up: ${warm.non2xx} non-2xx, ${warm.errors} errors`)
  }
}

async function stopServers (servers) {
  await Promise.all([...servers.values()].map((s) => s.stop()))
}

/**
 * Starts every variant's server and the load generator, checks the
 * responses, warms the servers up and measures the rounds. With
 * `settings.freshServers`, every round starts (and warms up) new server
 * processes: a process can fall into a state that makes it slower for its
 * whole life (on Node 20 and 22, a megamorphic process.nextTick; see the
 * README), and one process per variant would make that one draw for the
 * whole run. Returns { rows: one per round, case and variant; checks }.
 */
export async function runHttp ({ variants, cases, settings, cores, log, elapsed }) {
  let servers = await startServers(variants, cores?.server)
  const load = startChild(loaderScript, [], cores?.load)
  const rows = []
  try {
    log(`Servers up after ${elapsed()}`)
    const checks = await runChecks(servers, variants, cases, log)
    for (const check of checks) {
      if (check.usable === false) log(`! ${check.variant} ${check.probe}: ${check.notes.join('; ')}`)
    }
    await warmUp(servers, variants, load, cases, settings, log)
    log(`Checks and warm-up done after ${elapsed()}`)
    for (let round = 0; round < settings.rounds; round++) {
      if (round > 0 && settings.freshServers) {
        await stopServers(servers)
        servers = await startServers(variants, cores?.server)
        await warmUp(servers, variants, load, cases, settings, log)
      }
      // Rotate the order each round, so no variant always follows the same one.
      const order = variants.map((_, i) => variants[(i + round) % variants.length])
      for (const testCase of cases) {
        const cells = []
        for (const variant of order) {
          if (!serves(variant, testCase.id)) continue
          let row
          try {
            row = { round, caseId: testCase.id, variant: variant.id, ...await measureCell(servers.get(variant.id), load, testCase.id, settings) }
          } catch (err) {
            row = { round, caseId: testCase.id, variant: variant.id, cpuPerRequest: NaN, error: err.message }
            log(`! ${variant.id} ${testCase.id}: ${err.message}`)
          }
          rows.push(row)
          const bad = row.non2xx > 0 || row.errors > 0 ? ` (${row.non2xx} non-2xx, ${row.errors} errors)` : ''
          cells.push(`${variant.id} ${row.cpuPerRequest.toFixed(1)}${bad}`)
        }
        log(`round ${round + 1}/${settings.rounds} ${testCase.id.padEnd(7)} µs/req: ${cells.join(' · ')}`)
      }
    }
    return { rows, checks }
  } finally {
    await Promise.all([load.stop(), stopServers(servers)])
  }
}
