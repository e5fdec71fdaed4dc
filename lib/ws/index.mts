// The ES module entry of fastify-hono/ws: the same instance as the CommonJS one.
export { upgradeWebSocket, upgradeWebSocket as default } from './index.js'
export type { UpgradeWebSocketOptions, WebSocketLike } from './index.js'
