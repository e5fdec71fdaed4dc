// Migration benchmark: the same, with GET json mirrored on every request.
import { createTwinServer } from '../twin-server.mjs'
import { PREFIX } from '../payloads.mjs'

export function createServer () {
  return createTwinServer({ routes: { [`GET ${PREFIX}/json`]: { mirror: true } } })
}
