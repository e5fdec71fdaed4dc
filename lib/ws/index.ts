import type { Context } from 'hono'
import { defineWebSocketHelper, type UpgradeWebSocket } from 'hono/ws'
import { FST_ERR_HONO_WEBSOCKET_DISABLED } from '../errors.js'
import { kUpgradeState, type UpgradeState, type WebSocketLike } from './types.js'

export type { WebSocketLike }

/** What the helper's `options` take: a handler for errors thrown by the app's event handlers (default: the request log). */
export interface UpgradeWebSocketOptions {
  onError?: (err: unknown) => void
}

/**
 * Hono's `upgradeWebSocket` for an app mounted with fastify-hono: use it
 * where an app served by @hono/node-server imports that package's own. On
 * a mount registered with the `websocket` option, an upgrade request that
 * reaches it is accepted once the app's answer comes back (as a 200: an
 * answer that middleware turned into another status goes out as an HTTP
 * answer instead). A request that is not an upgrade goes on to the next
 * handler. `ws.raw` is the `ws` WebSocket.
 */
// Older hono (before 4.6.7) has a hono/ws without it: say so at import,
// rather than "defineWebSocketHelper is not a function".
if (typeof defineWebSocketHelper !== 'function') {
  throw new Error('fastify-hono/ws needs the defineWebSocketHelper of hono/ws, which hono has from 4.6.7 on')
}

export const upgradeWebSocket: UpgradeWebSocket<WebSocketLike, UpgradeWebSocketOptions> =
  defineWebSocketHelper<WebSocketLike, UpgradeWebSocketOptions>(async (c: Context, events, options?: UpgradeWebSocketOptions) => {
    if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') return undefined
    const state = (c.env as Record<symbol, UpgradeState | undefined> | undefined)?.[kUpgradeState]
    if (state === undefined) throw new FST_ERR_HONO_WEBSOCKET_DISABLED()
    state.requested = true
    state.events = events as UpgradeState['events']
    state.onError = options?.onError
    state.url = c.req.url
    // Through the context, so that headers the app set with c.header() go out with the 101.
    return c.body(null)
  })

export default upgradeWebSocket
