// @hono/node-server as the reference: the same fixture app served by it in
// a child process (it replaces the global Request and Response, which a test
// process must keep), and what of a wire response the two must agree on.
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import type { WireResponse } from './net'
import { installedVersion } from './optional'

/**
 * Why a comparison with @hono/node-server is left out here, or false. What
 * these tests record as the reference's answers, and the plugin follows, is
 * @hono/node-server 2 (docs/node-server-differences.md). An install with 1.x
 * (the CI floor run: 2.x does not load on a hono without hono/ws's
 * defineWebSocketHelper) answers otherwise in places 2.x changed (a
 * Content-Type on null bodies, headers read late from a header record).
 */
export function referenceUnavailable (): false | string {
  const installed = installedVersion('@hono/node-server')
  const major = /^@hono\/node-server (\d+)\./.exec(installed)?.[1]
  if (major !== undefined && Number(major) >= 2) return false
  return `the reference these tests record is @hono/node-server 2; installed: ${installed}`
}

export interface Teardown { teardown: (fn: () => void) => void }

/** Serves `exportName(...args)` from test/fixtures/`fixture` with @hono/node-server; resolves with its port. */
export async function nodeServerPort (t: Teardown, fixture: string, exportName: string, args: string[] = []): Promise<number> {
  const child = fork(join(__dirname, '..', 'fixtures', 'node-server-serve.mjs'), [join(__dirname, '..', 'fixtures', fixture), exportName, ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  t.teardown(() => { if (child.connected) child.disconnect() })
  const [message] = await once(child, 'message') as [{ port: number }]
  return message.port
}

// Hop-by-hop and framing headers: each server frames a body its own way.
const FRAMING = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'])

/** The header lines a client sees as the app's, lowercase names, sorted. */
export function appHeaders (response: WireResponse): string[] {
  const lines: string[] = []
  for (const [name, values] of Object.entries(response.headers)) {
    if (FRAMING.has(name)) continue
    for (const value of values) lines.push(`${name}: ${value}`)
  }
  return lines.sort()
}
