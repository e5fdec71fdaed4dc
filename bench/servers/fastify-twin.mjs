// Migration benchmark: the Fastify routes beside a mount, no migration option.
import { createTwinServer } from '../twin-server.mjs'

export function createServer () {
  return createTwinServer(undefined)
}
