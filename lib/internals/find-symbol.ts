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

/** The value under a private key found by findSymbol, typed as its caller documents it. */
export function readPrivate<T> (object: object, key: symbol): T {
  return Reflect.get(object, key) as T
}

/** Sets the value under a private key found by findSymbol. */
export function writePrivate (object: object, key: symbol, value: unknown): void {
  Reflect.set(object, key, value)
}
