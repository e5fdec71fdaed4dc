// Fastify plugins a test needs that may refuse the installed Fastify: the
// @fastify/* plugins declare `fastify: '5.x'`, and Fastify refuses them at
// register() on a 6.0.0 (FST_ERR_PLUGIN_VERSION_MISMATCH) until they have a
// release for it. On an alpha or rc of 6, Fastify's grace rule for
// prereleases still loads them. So whether a test can run is decided by
// what actually loads, never by a version number: a fresh process registers
// the plugin on a fresh Fastify, and only Fastify's version refusal skips
// the test, with Fastify's own message as the reason. Any other error (a
// missing option) counts as loading: the test then shows what went wrong.
//
//   test(name, { skip: refuses('@fastify/cors') }, ...)
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'

const root = resolve(__dirname, '..', '..')
const answers = new Map<string, false | string>()

/**
 * false when each plugin (the default export of each module) loads on the
 * installed Fastify; else why a test that needs them is skipped.
 */
export function refuses (...specifiers: string[]): false | string {
  for (const specifier of specifiers) {
    const answer = refusesMade(specifier, 'm.default ?? m')
    if (answer !== false) return answer
  }
  return false
}

/** The same for a plugin that `make`, a JavaScript expression, gives from its module `m`. */
export function refusesMade (specifier: string, make: string): false | string {
  const key = `${specifier}\0${make}`
  const known = answers.get(key)
  if (known !== undefined) return known
  const script = `
    const Fastify = require('fastify')
    let m
    try {
      m = require(${JSON.stringify(specifier)})
    } catch (err) {
      if (err.code !== 'MODULE_NOT_FOUND') throw err
      process.stdout.write(JSON.stringify({ missing: true }))
      process.exit(0)
    }
    const plugin = ${make}
    const app = Fastify()
    app.register(plugin)
    app.ready((err) => {
      const refused = err != null && err.code === 'FST_ERR_PLUGIN_VERSION_MISMATCH'
      process.stdout.write(JSON.stringify(refused ? err.message : null))
      process.exit(0)
    })`
  const child = spawnSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8', timeout: 20_000 })
  if (child.status !== 0) throw new Error(`could not check whether ${specifier} loads (exit ${String(child.status)}): ${child.stderr}`)
  const message = JSON.parse(child.stdout) as string | null | { missing: true }
  const answer = message === null ? false : typeof message === 'object' ? `${specifier} is not installed` : `${specifier} does not load on fastify ${fastifyVersion()}: ${message}`
  answers.set(key, answer)
  return answer
}

function fastifyVersion (): string {
  return (require(require.resolve('fastify/package.json', { paths: [root] })) as { version: string }).version
}
