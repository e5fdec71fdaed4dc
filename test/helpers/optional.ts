// Modules a test needs that an older install may lack: the CI floor run
// (.ci/compat.mjs) installs the lowest hono and fastify the peer ranges
// accept. A test that needs one is skipped there by feature detection (is
// the module, or the export, there?), never by a list of versions, and the
// skip says why: `t.test(name, { skip: lacks('hono/timeout') }, ...)`, then
// `need<{ timeout: typeof Timeout }>('hono/timeout')` inside the test.
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const load = createRequire(__filename)

function tryLoad (specifier: string): Record<string, unknown> | undefined {
  try {
    return load(specifier) as Record<string, unknown>
  } catch (err) {
    const code = (err as { code?: string }).code
    if (code === 'ERR_PACKAGE_PATH_NOT_EXPORTED' || code === 'MODULE_NOT_FOUND') return undefined
    throw err
  }
}

export function installedVersion (specifier: string): string {
  const name = specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')
  try {
    return `${name} ${(load(`${name}/package.json`) as { version: string }).version}`
  } catch {}
  // A package whose exports leave out ./package.json (hono 4.1): up from its entry.
  try {
    let dir = dirname(load.resolve(name))
    while (dir !== dirname(dir)) {
      const file = join(dir, 'package.json')
      if (existsSync(file)) {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string, version?: string }
        if (pkg.name === name) return `${name} ${pkg.version ?? '(no version)'}`
      }
      dir = dirname(dir)
    }
  } catch {}
  return `${name} (not installed)`
}

/** false when `specifier` (and its export `name`, if given) can be loaded; else why the test is skipped. */
export function lacks (specifier: string, name?: string): false | string {
  const module = tryLoad(specifier)
  if (module === undefined) {
    const installed = installedVersion(specifier)
    return installed.endsWith('(not installed)') ? installed.replace('(not installed)', 'is not installed') : `${specifier} is not in the installed ${installed}`
  }
  if (name !== undefined && module[name] === undefined) return `${specifier} has no ${name} in the installed ${installedVersion(specifier)}`
  return false
}

/** The module, in a test that `lacks()` let run. */
export function need<T> (specifier: string): T {
  return load(specifier) as T
}
