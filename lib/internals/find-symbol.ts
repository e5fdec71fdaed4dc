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
