/**
 * Finds a private symbol of Fastify or Node by its description, on the
 * object or along its prototype chain, or null. Each caller says which
 * version it checked the description on, and what it does without it.
 */
export function findSymbol (object: object, description: string): symbol | null {
  for (let o: object | null = object; o !== null; o = Object.getPrototypeOf(o)) {
    const found = Object.getOwnPropertySymbols(o).find((symbol) => symbol.description === description)
    if (found !== undefined) return found
  }
  return null
}

/**
 * An object's slots under private keys found by findSymbol, to read or set
 * as `slots(object)[key]` at the caller: the keyed access stays at each call
 * site, where V8 sees one object shape and one key, rather than in a shared
 * helper whose one access would see them all (or in Reflect.get, a generic
 * lookup with no inline cache).
 */
export function slots (object: object): Record<symbol, unknown> {
  return object as Record<symbol, unknown>
}
