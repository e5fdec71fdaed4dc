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
//   t.test(name, { skip: refuses('@fastify/cors') }, ...)
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'

const root = resolve(__dirname, '..', '..')
const answers = new Map<string, false | string>()

/**
 * false when the plugin loads on the installed Fastify; else why a test
 * that needs it is skipped. `make` is a JavaScript expression that gives the
 * plugin from its module `m` (the default: its default export).
 */
export function refuses (specifier: string, make = 'm.default ?? m'): false | string {
  const key = `${specifier}\0${make}`
  const known = answers.get(key)
  if (known !== undefined) return known
  const script = `
    const Fastify = require('fastify')
    const m = require(${JSON.stringify(specifier)})
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
  const message = JSON.parse(child.stdout) as string | null
  const answer = message === null ? false : `${specifier} does not load on fastify ${fastifyVersion()}: ${message}`
  answers.set(key, answer)
  return answer
}

function fastifyVersion (): string {
  return (require(require.resolve('fastify/package.json', { paths: [root] })) as { version: string }).version
}
