import type { FastifyReply } from 'fastify'

/**
 * Whether onSend hooks apply to this reply's route. They only run through
 * reply.send, so the fast writer must step aside for them. Fastify keeps them
 * on the route context, under a private symbol described 'fastify.context'
 * (set on the reply as it is built),
 * as an array, or null when there are none (checked on 5.0–5.12.8). If that
 * ever changes, this answers true and every reply takes the fallback: slower,
 * never wrong.
 */
export function hasOnSendHooks (reply: FastifyReply): boolean {
  kRouteContext ??= findSymbol(reply, 'fastify.context')
  if (kRouteContext === null) return true
  const context = (reply as unknown as Record<symbol, { onSend?: unknown } | undefined>)[kRouteContext]
  return context === undefined || context.onSend !== null
}

let kRouteContext: symbol | null | undefined

function findSymbol (object: object, description: string): symbol | null {
  for (let o: object | null = object; o !== null; o = Object.getPrototypeOf(o)) {
    const found = Object.getOwnPropertySymbols(o).find((symbol) => symbol.description === description)
    if (found !== undefined) return found
  }
  return null
}
