// The first upgrade request of a server must be collectable once its
// WebSocket has closed: the handshake's 'headers' listener, added to the
// WebSocketServer once, must not keep the scope of the upgrade that added it.
// In a child process with --expose-gc, over a real `ws` client.
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { lacks } from './helpers/optional'

// Its fixture imports fastify-hono/ws: hono 4.6.7 or later.
test('the first WebSocket upgrade request is freed after its socket closed', { skip: lacks('hono/ws', 'defineWebSocketHelper') }, async (t) => {
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', join(__dirname, 'fixtures', 'ws-first-upgrade-gc.mjs')], { timeout: 30_000 }, (err, out, errOut) => {
      if (err !== null) reject(Object.assign(err, { stderr: errOut }))
      else resolve(out)
    })
  })
  t.same(JSON.parse(stdout.trim()), { collected: true })
})
