// The layout of lib/: no module imports, directly or through others, a
// module that imports it back (type-only imports included: a circle of types
// is still a circle in the design). Read from the sources' import lines.
import { test } from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const lib = resolve(__dirname, '..', 'lib')

function sources (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : /\.m?ts$/.test(name) ? [path] : []
  })
}

/** The lib/ modules a source imports (relative specifiers, `.js` and `.mjs` mapped back to their sources). */
function importsOf (file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const found: string[] = []
  for (const match of text.matchAll(/^(?:import|export)\s[^'"]*?from\s+'(\.{1,2}\/[^']+)'|^import\s+'(\.{1,2}\/[^']+)'/gm)) {
    const specifier = match[1] ?? match[2]
    found.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts').replace(/\.mjs$/, '.mts')))
  }
  return found
}

test('no import circle in lib/', async (t) => {
  const files = sources(lib)
  t.ok(files.length > 40, `${files.length} modules read`)
  const graph = new Map(files.map((file) => [file, importsOf(file)]))
  for (const [file, imports] of graph) for (const target of imports) t.ok(graph.has(target), `${relative(lib, file)} imports ${relative(lib, target)}, which exists`)
  const circles: string[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const stack: string[] = []
  const visit = (file: string): void => {
    state.set(file, 'visiting')
    stack.push(file)
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === 'visiting') circles.push([...stack.slice(stack.indexOf(target)), target].map((path) => relative(lib, path)).join(' → '))
      else if (!state.has(target)) visit(target)
    }
    stack.pop()
    state.set(file, 'done')
  }
  for (const file of files) if (!state.has(file)) visit(file)
  t.same(circles, [], 'no circles')
})
