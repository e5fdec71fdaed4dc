import { LightweightHeaders, NativeHeaders } from './headers.js'
import { LightweightRequest, NativeRequest } from './request.js'
import { LightweightResponse, NativeResponse } from './response.js'

// Installed as the globals, the classes introduce themselves as the native
// ones do: `Response.name`, `new Response().constructor.name` and
// `Response.length` are the native class's, not our class's.
for (const [lightweight, native] of [[LightweightResponse, NativeResponse], [LightweightRequest, NativeRequest], [LightweightHeaders, NativeHeaders]] as const) {
  Object.defineProperty(lightweight, 'name', { value: native.name, configurable: true })
  Object.defineProperty(lightweight, 'length', { value: native.length, configurable: true })
}

/**
 * Installs the lightweight classes as the global Request, Response and
 * Headers, so that a Hono handler's `new Response(…)` is one the fast writer
 * can send, and the Headers Hono copies between middleware are cheap to copy.
 * Done once per process, at the first registration that asks for it; the
 * native classes stay reachable as NativeRequest/NativeResponse/NativeHeaders.
 */
export function installLightweightGlobals (): void {
  if (globalThis.Response !== (LightweightResponse as unknown)) {
    Object.defineProperty(globalThis, 'Response', { value: LightweightResponse, writable: true, configurable: true })
  }
  if (globalThis.Request !== (LightweightRequest as unknown)) {
    Object.defineProperty(globalThis, 'Request', { value: LightweightRequest, writable: true, configurable: true })
  }
  if (globalThis.Headers !== (LightweightHeaders as unknown)) {
    Object.defineProperty(globalThis, 'Headers', { value: LightweightHeaders, writable: true, configurable: true })
  }
}

export function lightweightGlobalsInstalled (): boolean {
  return globalThis.Response === (LightweightResponse as unknown) && globalThis.Request === (LightweightRequest as unknown)
}
