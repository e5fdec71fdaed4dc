// Migration benchmark: the same, with GET json mirrored on a 10% sample.
import { createTwinServer } from '../twin-server.mjs'
import { PREFIX } from '../payloads.mjs'

export function createServer () {
  return createTwinServer({ routes: { [`GET ${PREFIX}/json`]: { mirror: { sample: 0.1 } } } })
}
