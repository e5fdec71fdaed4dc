// A/B against an earlier commit: `node bench/targets.mjs --base=<commit>`.
// The runner side builds the plugin as it was at that commit into a temporary
// git worktree and says where its dist/ is, in an environment variable that
// every child process inherits; the server side (server.mjs and
// servers/fastify-hono-base.mjs) loads the plugin from there.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, symlinkSync, unlinkSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** The variant that serves the bench app with the base commit's plugin. */
export const BASE_VARIANT = 'fastify-hono-base'

/** The same under the production stack (stack.mjs): the way out after onSend hooks. */
export const BASE_STACK_VARIANT = 'fastify-hono-base-stack'

/** Where the base build's dist/ is, for the server processes. */
const BASE_DIST_ENV = 'FASTIFY_HONO_BASE_DIST'

/**
 * The cases compared between the plugin now and at the base commit: those
 * whose cost is the plugin's own path (buffered responses, routing and
 * middleware, a request body), not the load generator's or the socket's.
 */
export const AB_CASES = ['text', 'json', 'param', 'middleware', 'mixed', 'echo']

/** The production-stack cases compared the same way (the stack's onSend hooks keep them off the fast writer). */
export const AB_STACK_CASES = ['text', 'json', 'param', 'mixed', 'echo']

/**
 * The A/B targets for a base build (`base`: buildBase's answer) on the cases
 * `has(caseId)` accepts: fastify-hono now ÷ then, without and with the
 * production stack. No bound.
 */
export function abTargets (base, has = () => true) {
  const plain = AB_CASES.filter(has).map((caseId) => ({
    id: `ab-${caseId}`,
    group: 'a/b',
    label: `${caseId}: fastify-hono now ÷ at ${base.short}`,
    over: ['fastify-hono', caseId],
    under: [BASE_VARIANT, caseId]
  }))
  const stack = AB_STACK_CASES.filter(has).map((caseId) => ({
    id: `ab-stack-${caseId}`,
    group: 'a/b',
    label: `${caseId} under the stack: fastify-hono now ÷ at ${base.short}`,
    over: ['fastify-hono-stack', caseId],
    under: [BASE_STACK_VARIANT, caseId]
  }))
  return [...plain, ...stack]
}

function git (cwd, args) {
  const result = spawnSync('git', ['-C', cwd, ...args], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${(result.stderr || result.stdout).trim()}`)
  return result.stdout.trim()
}

/**
 * Checks out `commit` as a detached worktree under os.tmpdir(), with this
 * checkout's node_modules linked in, and builds it with this checkout's tsc.
 * Sets the environment variable the servers read, and removes the worktree
 * when this process exits (normally, by an error or by SIGINT/SIGTERM);
 * `cleanup()` removes it sooner. Returns { sha, short, dist, cleanup }.
 */
export function buildBase (commit, log = console.log) {
  const root = git(fileURLToPath(new URL('.', import.meta.url)), ['rev-parse', '--show-toplevel'])
  const sha = git(root, ['rev-parse', '--verify', `${commit}^{commit}`])
  const short = git(root, ['rev-parse', '--short', sha])
  const parent = mkdtempSync(join(os.tmpdir(), `fastify-hono-base-${short}-`))
  const dir = join(parent, 'tree')
  let removed = false
  const cleanup = () => {
    if (removed) return
    removed = true
    // The link first, so that nothing can remove the shared node_modules through it.
    try { unlinkSync(join(dir, 'node_modules')) } catch {}
    const remove = spawnSync('git', ['-C', root, 'worktree', 'remove', '--force', dir], { encoding: 'utf8' })
    rmSync(parent, { recursive: true, force: true })
    if (remove.status !== 0) spawnSync('git', ['-C', root, 'worktree', 'prune'])
  }
  process.on('exit', cleanup)
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => process.exit(128 + os.constants.signals[signal]))
  }
  try {
    git(root, ['worktree', 'add', '--detach', '--quiet', dir, sha])
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir')
    log(`Building ${short} in ${dir}`)
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], { cwd: dir, encoding: 'utf8' })
    const dist = join(dir, 'dist')
    if (!existsSync(join(dist, 'index.js'))) {
      throw new Error(`building ${short} produced no dist/index.js: ${(tsc.stdout + tsc.stderr).trim().slice(0, 2000)}`)
    }
    // Type errors against today's dependencies still emit the same JavaScript.
    if (tsc.status !== 0) log(`! tsc reported errors building ${short} (its output is used):\n${(tsc.stdout + tsc.stderr).trim().split('\n').slice(0, 10).join('\n')}`)
    process.env[BASE_DIST_ENV] = dist
    return { sha, short, dist, cleanup }
  } catch (err) {
    cleanup()
    throw err
  }
}

/** The first of `candidates` (paths under the base build's dist/) that exists, as a file URL; undefined if none. */
function baseDistFile (candidates) {
  const dist = process.env[BASE_DIST_ENV]
  if (dist === undefined) throw new Error(`${BASE_VARIANT} needs ${BASE_DIST_ENV}: run it through \`node bench/targets.mjs --base=<commit>\``)
  const found = candidates.map((path) => join(dist, path)).find((file) => existsSync(file))
  return found === undefined ? undefined : pathToFileURL(found).href
}

/** The base commit's plugin function, from its ES module entry (or its CommonJS one in builds that had none). */
export async function loadBasePlugin () {
  const entry = baseDistFile(['index.mjs', 'index.js'])
  if (entry === undefined) throw new Error(`no index.mjs or index.js in ${process.env[BASE_DIST_ENV]}`)
  const { default: exported } = await import(entry)
  return typeof exported === 'function' ? exported : exported.default
}

/**
 * The module whose keepTickObjectAlive() a server process calls: the
 * plugin's own build, so that each process holds the one tick object its
 * plugin would hold (the base build's for the base variant, at
 * dist/internals/ or, in older layouts, at dist/; this checkout's otherwise).
 */
export function tickObjectModule (variantId) {
  const base = variantId === BASE_VARIANT || variantId === BASE_STACK_VARIANT ? baseDistFile(['internals/tick-object.js', 'tick-object.js']) : undefined
  return base ?? new URL('../dist/internals/tick-object.js', import.meta.url).href
}
