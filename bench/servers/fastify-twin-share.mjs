// Migration benchmark: the same, with a 0% share on GET text (the router derives the split for every request).
import { createTwinServer } from '../twin-server.mjs'
import { PREFIX } from '../payloads.mjs'

export function createServer () {
  return createTwinServer({ routes: { [`GET ${PREFIX}/text`]: { share: 0 } } })
}
