import { createHook } from 'node:async_hooks'

/**
 * Keeps one of Node's tick objects alive for the life of the process.
 *
 * On Node 20 and 22, process.nextTick builds each tick object with an object
 * literal with computed (symbol) keys, and Node's HTTP server calls it
 * several times per request. In a server with a large app loaded, the
 * feedback for the second and later keys can go megamorphic at the first
 * request (`%DebugPrint(process.nextTick)` shows it), and from then on every
 * tick object is built through the V8 runtime, a large share of a request's
 * cost. One tick object held for good keeps its maps alive, and the
 * feedback stays monomorphic (test/tick-object.test.ts checks it). Harmless
 * on Node 20–26: Node 26 builds tick objects differently.
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
