// The README, read as a file: its size, and the tables that must stay in
// step with lib/ (every error code the plugin raises, every option it takes).
import { test } from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const root = join(__dirname, '..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')

/** The body of the README's `## title` section, up to the next `## `. */
function section (title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`)
  if (start === -1) return ''
  const end = readme.indexOf('\n## ', start + 1)
  return readme.slice(start, end === -1 ? undefined : end)
}

test('the README is at most 10 KB', async (t) => {
  t.ok(Buffer.byteLength(readme) <= 10_000, `${Buffer.byteLength(readme)} bytes`)
})

test('the README has the sections a Fastify user looks for', async (t) => {
  for (const title of ['Install', 'Usage', 'Options', 'Typed `c.env`', 'Encapsulation and hooks', 'Gradual migration', 'WebSockets', 'Errors', 'Troubleshooting', 'Alternatives', 'Compatibility', 'Performance', 'Development', 'License']) {
    t.not(section(title), '', `## ${title}`)
  }
  t.match(section('Development'), 'npm install && npm start')
  t.match(section('Development'), 'npm test')
  t.notMatch(readme, /\bissue\s*#?\d+|#\d{2,}\b/i, 'no issue numbers')
})

test('Errors: every FST_ERR_HONO_* code in lib/errors.ts has its row, and no row names a code that is not there', async (t) => {
  const source = readFileSync(join(root, 'lib', 'errors.ts'), 'utf8')
  const raised = [...new Set([...source.matchAll(/createError\w*(?:<[^>]*>)?\(\s*'(FST_ERR_HONO_\w+)'/g)].map((match) => match[1]))].sort()
  t.ok(raised.length >= 4, `lib/errors.ts defines ${raised.join(', ')}`)
  const rows = [...section('Errors').matchAll(/^\|\s*`(FST_ERR_HONO_\w+)`\s*\|/gm)].map((match) => match[1]).sort()
  t.same(rows, raised)
})

test('Options: every option of FastifyHonoOptions (and of its websocket option) has its row', async (t) => {
  const options = readFileSync(join(root, 'lib', 'options.ts'), 'utf8')
  const body = /export interface FastifyHonoOptions \{([\s\S]*?)\n\}/.exec(options)?.[1] ?? ''
  const names = [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((match) => match[1])
  // The WebSocket option's interface, wherever lib/ws/ keeps it.
  const ws = readdirSync(join(root, 'lib', 'ws')).filter((file) => file.endsWith('.ts')).map((file) => readFileSync(join(root, 'lib', 'ws', file), 'utf8')).join('\n')
  const wsBody = /export interface WebSocketOption \{([\s\S]*?)\n\}/.exec(ws)?.[1] ?? ''
  const wsNames = [...wsBody.matchAll(/^ {2}(\w+)\??:/gm)].map((match) => `websocket.${match[1]}`)
  t.ok(names.length >= 9 && wsNames.length >= 3, `${names.length} options, ${wsNames.length} WebSocket ones`)
  const table = section('Options')
  const rows = new Set([...table.matchAll(/^\|([^|]+)\|/gm)].flatMap((match) => [...match[1].matchAll(/`([\w.]+)`/g)].map((name) => name[1])))
  for (const name of [...names.filter((name) => name !== 'websocket'), ...wsNames, 'prefix']) t.ok(rows.has(name), `\`${name}\` is in the table`)
})
