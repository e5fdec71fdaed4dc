/**
 * The meter provider an OpenTelemetry SDK registered, read without
 * depending on @opentelemetry/api: the API keeps its registrations on
 * globalThis under Symbol.for('opentelemetry.js.api.<major>'), and
 * `metrics.setGlobalMeterProvider()` stores the provider there as `metrics`
 * (checked on @opentelemetry/api 1.9.1, major 1). Undefined when no SDK
 * registered one (the API alone would hand out no-op meters), or under
 * another layout: then no OpenTelemetry metrics are made.
 */
const API_KEY = Symbol.for('opentelemetry.js.api.1')

export interface ObservableResultLike { observe (value: number, attributes?: Record<string, string>): void }
export interface ObservableLike { addCallback (callback: (result: ObservableResultLike) => void): void }
export interface MeterLike {
  createObservableGauge (name: string, options?: { description?: string }): ObservableLike
  createObservableCounter (name: string, options?: { description?: string }): ObservableLike
}

export function registeredMeter (name: string): MeterLike | undefined {
  const api = (globalThis as Record<symbol, { metrics?: { getMeter?: (name: string) => MeterLike } } | undefined>)[API_KEY]
  const provider = api?.metrics
  if (provider === undefined || typeof provider.getMeter !== 'function') return undefined
  const meter = provider.getMeter(name)
  return typeof meter?.createObservableGauge === 'function' && typeof meter.createObservableCounter === 'function' ? meter : undefined
}
