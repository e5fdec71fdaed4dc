import { createHook } from 'node:async_hooks'

/**
 * Keeps one of Node's tick objects alive for the life of the process.
 *
 * On Node 20 and 22, process.nextTick builds each tick object with an object
 * literal with computed (symbol) keys, and Node's HTTP server calls it about
 * seven times per request. In a server with a large app loaded (the
 * benchmark's Hono app behind this plugin), the feedback for the second and
 * later keys went megamorphic at the first request in most processes
 * (`%DebugPrint(process.nextTick)` shows it), and from then on every tick
 * object was built through the V8 runtime: about 5 µs per request, a fifth
 * of a Fastify route. With one tick object held for good, so that its maps
 * stay alive, the same server started 8 times out of 8 without it (against
 * 8 out of 8 with it, Node 20.20.2). Checked harmless on Node 20–26: Node 26
 * builds tick objects differently.
 *
 * The only way to reach a tick object is an async hook's init, enabled for
 * this one nextTick and disabled at once.
 */
export function keepTickObjectAlive (): void {
  if (kept !== undefined) return
  const hook = createHook({
    init (asyncId, type, triggerAsyncId, resource) {
      if (type === 'TickObject' && kept === undefined) kept = resource
    }
  })
  hook.enable()
  try {
    process.nextTick(noop)
  } finally {
    hook.disable()
  }
}

let kept: object | undefined

function noop (): void {}
