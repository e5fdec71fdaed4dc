/**
 * The RPC metadata OpenTelemetry's HTTP instrumentation
 * (@opentelemetry/instrumentation-http) puts in the context of a server
 * request, and names its server span from (`{method} {route}`) when the
 * response ends. @opentelemetry/core's getRPCMetadata() reads it under a
 * context key made with @opentelemetry/api's createContextKey(description),
 * which is Symbol.for(description): the key below (checked on
 * @opentelemetry/core 2.12.1 with @opentelemetry/api 1.9.1, and on
 * @fastify/otel 0.21.2, which fills `route` with `routeOptions.url`). Read
 * here so the plugin needs no OpenTelemetry package; undefined when the
 * context holds none (no HTTP instrumentation, or another layout): the
 * server span then keeps the name it had.
 */
const RPC_METADATA_KEY = Symbol.for('OpenTelemetry SDK Context Key RPC_METADATA')

interface ContextLike { getValue (key: symbol): unknown }

export function rpcMetadata (context: unknown): { route?: string } | undefined {
  if (context === null || typeof context !== 'object' || typeof (context as Partial<ContextLike>).getValue !== 'function') return undefined
  const metadata = (context as ContextLike).getValue(RPC_METADATA_KEY)
  return metadata !== null && typeof metadata === 'object' && 'type' in metadata ? metadata as { route?: string } : undefined
}
