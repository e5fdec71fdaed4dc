import { test } from 'tap'
import { execFileSync } from 'node:child_process'
import { resolve } from 'node:path'

// The published entry points, loaded the way users load them, from a fresh process.
const cwd = resolve(__dirname, '..')

test('require() returns the plugin, with .default and .fastifyHono', async (t) => {
  const out = execFileSync(process.execPath, ['-e', `
    const plugin = require('fastify-hono')
    console.log(JSON.stringify([typeof plugin, plugin.default === plugin, plugin.fastifyHono === plugin, plugin[Symbol.for('fastify.display-name')]]))
  `], { cwd }).toString()
  t.same(JSON.parse(out), ['function', true, true, 'fastify-hono'])
})

test('import: the default export and the named export are the same plugin, and it serves', async (t) => {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    import fastifyHono, { fastifyHono as named } from 'fastify-hono'
    import { createRequire } from 'node:module'
    import Fastify from 'fastify'
    import { Hono } from 'hono'
    const required = createRequire(import.meta.url)('fastify-hono')
    const server = Fastify()
    await server.register(fastifyHono, { app: new Hono().get('/', (c) => c.text('esm')), prefix: '/m' })
    await server.listen({ port: 0, host: '127.0.0.1' })
    const res = await fetch('http://127.0.0.1:' + server.server.address().port + '/m')
    console.log(JSON.stringify([fastifyHono === named, fastifyHono === required, await res.text()]))
    await server.close()
  `], { cwd }).toString()
  t.same(JSON.parse(out), [true, true, 'esm'])
})
