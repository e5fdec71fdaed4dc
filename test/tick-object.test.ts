// On Node 20 and 22, process.nextTick's object literal could go megamorphic
// at a server's first request (see lib/tick-object.ts), costing about 5 µs
// per request from then on. The plugin keeps a tick object alive to prevent
// it. V8's own view of nextTick's feedback is the only way to see it.
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { get } from 'node:http'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'tap'

function request (port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode ?? 0))
    }).on('error', reject)
  })
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

test('process.nextTick stays fast after a server\'s first requests', async (t) => {
  // V8 prints with C's stdio, which drops what a non-blocking pipe refuses
  // (under tap, most of the output was lost): stdout goes to a file.
  const dir = mkdtempSync(join(tmpdir(), 'fastify-hono-tick-'))
  const outFile = join(dir, 'stdout.txt')
  const fd = openSync(outFile, 'w')
  const child = fork(join(__dirname, 'fixtures', 'tick-server.mjs'), [], {
    execArgv: ['--allow-natives-syntax'],
    stdio: ['ignore', fd, 'inherit', 'ipc']
  })
  closeSync(fd)
  t.teardown(() => {
    child.kill()
    rmSync(dir, { recursive: true, force: true })
  })
  const [{ port }] = await once(child, 'message') as [{ port: number }]

  // The state changed at the first request, in most processes, when it did.
  await sleep(500)
  t.equal(await request(port, '/h/text'), 200)
  await sleep(500)
  for (let i = 0; i < 50; i++) await request(port, i % 2 === 0 ? '/h/json' : '/h/api/users/7')
  child.send('print')
  await once(child, 'exit')
  const output = readFileSync(outFile, 'utf8')

  const slots = output.split('\n').filter((line) => line.includes('DefineKeyedOwnPropertyInLiteral'))
  if (slots.length === 0) {
    // Node 26 builds tick objects without that literal; the state cannot arise.
    t.ok(Number(process.versions.node.split('.')[0]) >= 26, 'no literal slots only where Node builds tick objects otherwise')
    return
  }
  t.same(slots.filter((line) => line.includes('MEGAMORPHIC')), [], 'no megamorphic property definition in nextTick')
})
