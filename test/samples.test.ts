// Every JavaScript and TypeScript sample in README.md and docs/*.md runs.
// Each fenced js/ts block is one of two kinds:
// - complete: named by `<!-- sample: NAME -->` on the line before the fence,
//   written out to a file of its own and run with Node against the built
//   package, imported as `fastify-hono` (TypeScript: type-checked, then run).
//   A sample that listens is given a free port in place of its 3000, its
//   answers are checked over the socket by `checks[NAME]` below, and it is
//   then stopped; a sample that prints is checked on its output and must
//   exit by itself.
// - a fragment: its first line says `// fragment of examples/FILE` (or
//   bench/FILE), a file the examples test (or another test) runs, and
//   every line of the fragment is in that file, in order.
// A block of neither kind, or a check left without its sample, fails here.
import { test } from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import ts from 'typescript'
import WebSocket from 'ws'
import { codeBlocks, type CodeBlock } from './helpers/markdown'
import { lacks } from './helpers/optional'

const root = resolve(__dirname, '..')
const CODE = new Set(['js', 'javascript', 'mjs', 'cjs', 'ts', 'typescript', 'mts', 'cts'])
const FRAGMENT = /^\/\/ fragment of ((?:examples|bench)\/[\w./-]+)\s*$/

interface Sample extends CodeBlock { file: string }

function documents (): string[] {
  return ['README.md', ...readdirSync(join(root, 'docs')).filter((file) => file.endsWith('.md')).sort().map((file) => `docs/${file}`)]
}

const samples: Sample[] = documents().flatMap((file) =>
  codeBlocks(readFileSync(join(root, file), 'utf8')).filter((block) => CODE.has(block.lang)).map((block) => ({ ...block, file })))

// --- What each complete sample must do -------------------------------------

interface Running {
  base: string
  /** Everything the sample printed so far, stdout and stderr. */
  output: () => string
}

type Check = (t: Tap.Test, running: Running) => Promise<void>

async function get (url: string, init?: RequestInit): Promise<{ status: number, headers: Headers, text: string }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

async function json (url: string, init?: RequestInit): Promise<{ status: number, body: unknown }> {
  const res = await get(url, init)
  return { status: res.status, body: JSON.parse(res.text) }
}

function echoOverWebSocket (url: string, message: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    const timer = setTimeout(() => { ws.terminate(); reject(new Error('no echo in 10 s')) }, 10_000)
    ws.on('open', () => ws.send(message))
    ws.on('message', (data) => { clearTimeout(timer); ws.close(); resolve(data.toString()) })
    ws.on('error', (err) => { clearTimeout(timer); reject(err) })
  })
}

const usage: Check = async (t, { base }) => {
  t.same(await json(`${base}/v2/users/7`), { status: 200, body: { id: '7' } }, 'the app answers under the prefix, seeing /users/7')
  const legacy = await get(`${base}/legacy`)
  t.same([legacy.status, legacy.text], [200, 'still Fastify'], 'a Fastify route beside it')
}

/** Waits (5 s at most) until the sample has printed something that matches. */
async function printed (running: Running, pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 5000
  while (!pattern.test(running.output()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  return running.output()
}

const checks: Record<string, Check> = {
  'usage-esm': usage,
  'usage-cjs': async (t, running) => {
    t.same(await json(`${running.base}/v2/users/7`), { status: 200, body: { id: '7' } })
    t.match(await printed(running, /"msg":"request completed"/), /"msg":"request completed"/, 'Fastify logs the request')
  },
  'typed-env': async (t, { base }) => {
    const { status, body } = await json(`${base}/v2/whoami`)
    t.equal(status, 200)
    t.match(body, { requestId: String, address: /^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/, keepAlive: true })
  },
  'scoped-hook': async (t, { base }) => {
    t.equal((await get(`${base}/health`)).text, 'ok', 'a route outside the scope needs no token')
    t.same(await json(`${base}/admin/stats`), { status: 401, body: { error: 'token needed' } }, 'the hook answers before the app')
    t.same(await json(`${base}/admin/stats`, { headers: { authorization: 'Bearer s3cret' } }), { status: 200, body: { user: 'ada' } },
      'the app reads what the hook set')
  },
  migration: async (t, { base }) => {
    t.same(await json(`${base}/users/1`), { status: 200, body: { id: '1', from: 'hono' } }, 'moved: Hono answers at the root')
    t.same(await json(`${base}/orders`), { status: 200, body: { from: 'fastify' } }, 'the Fastify route wins over the same Hono route')
    const missing = await json(`${base}/nowhere`)
    t.equal(missing.status, 404)
    t.match(missing.body, { error: 'Not Found', message: 'Route GET:/nowhere not found' }, "Fastify's 404")
  },
  websocket: async (t, { base }) => {
    t.equal(await echoOverWebSocket(`${base.replace('http', 'ws')}/api/echo`, 'hello'), 'hello', 'the message comes back')
  },
  'migration-strangler': async (t, { base }) => {
    t.same(await json(`${base}/users/7`), { status: 200, body: { id: '7' } }, 'moved to Hono')
    t.same(await json(`${base}/orders`), { status: 200, body: [{ id: 'o-1', total: 42 }] }, 'still Fastify')
    t.same(await json(`${base}/nowhere`), { status: 404, body: { error: 'Not Found' } }, "Fastify's not-found handler")
  },
  openapi: async (t, { base }) => {
    const { status, body } = await json(`${base}/documentation/json`)
    t.equal(status, 200)
    const document = body as { paths: Record<string, unknown>, components?: { schemas?: Record<string, unknown> } }
    t.ok(document.paths['/orders'], 'the Fastify route is listed')
    t.ok(document.paths['/v2/users/{id}'], "the app's route is listed under the prefix")
    t.ok(document.components?.schemas?.User, 'with its schema')
    t.same(await json(`${base}/v2/users/7`), { status: 200, body: { id: '7' } })
  },
  'drain-options': async (t, { base }) => {
    const res = await get(`${base}/api/upload`, { method: 'POST', body: 'x'.repeat(1000) })
    t.same([res.status, res.text], [202, 'accepted'], 'answered without reading the body')
  },
  'headers-kept': async (t, { base }) => {
    const res = await get(`${base}/file`)
    t.equal(res.status, 200)
    t.equal(res.text, 'streamed file')
    t.equal(res.headers.get('x-before'), '1')
    t.equal(res.headers.get('cache-control'), 'max-age=60', 'a header set after c.body() still goes out')
  },
  'route-name-option': async (t, running) => {
    const { base } = running
    for (const id of ['1', '2']) t.same(await json(`${base}/v2/users/${id}`), { status: 200, body: { id } })
    const metrics = (await get(`${base}/metrics`)).text
    t.match(metrics, 'http_request_duration_seconds_count{method="GET",route="/v2/users/:id",status_code="200"} 2', 'the metric is labelled with the Hono route')
    const output = await printed(running, /"route":"\/v2\/users\/:id".*"msg":"request completed"[\s\S]*"route":"\/v2\/users\/:id".*"msg":"request completed"/)
    const completed = output.split('\n').filter((line) => line.includes('"msg":"request completed"')).map((line) => JSON.parse(line) as { route?: string })
    t.same(completed.slice(0, 2).map((line) => line.route), ['/v2/users/:id', '/v2/users/:id'], 'the log line carries the route')
  },
  'websocket-docs': async (t, running) => {
    t.equal(await echoOverWebSocket(`${running.base.replace('http', 'ws')}/api/echo`, 'ping'), 'ping')
    // The server saw the close: onClose printed its code.
    t.match(await printed(running, /^(1000|1005) /m), /^(1000|1005) /m, 'onClose ran with the close code')
  }
}

// --- Running them ----------------------------------------------------------

/**
 * Why a sample cannot run with what is installed (the CI floor run has an
 * older hono), found by feature detection, or false.
 */
async function unsupported (sample: Sample): Promise<false | string> {
  if (/from 'fastify-hono\/ws'/.test(sample.code)) {
    const missing = lacks('hono/ws', 'defineWebSocketHelper')
    if (missing !== false) return missing
  }
  // docs/web-classes.md: Hono hands its prepared Headers object to the Response (not a record) since 4.x releases after the floor.
  if (sample.name === 'headers-kept' && !(await honoPassesHeadersObject())) return 'this hono passes c.body() a header record, not its Headers object'
  return false
}

async function honoPassesHeadersObject (): Promise<boolean> {
  const Native = globalThis.Response
  let passed: unknown
  globalThis.Response = class extends Native {
    constructor (body?: BodyInit | null, init?: ResponseInit) {
      super(body, init)
      passed ??= init?.headers
    }
  }
  try {
    const { Hono } = await import('hono')
    await new Hono().get('/', (c) => { c.header('x-probe', '1'); return c.body('probe') }).request('/')
  } finally {
    globalThis.Response = Native
  }
  return passed instanceof Headers
}

const load = createRequire(__filename)

/** The bare package names a sample imports or requires, that are not installed here (the CI floor run lacks some). */
function missingPackages (code: string): string[] {
  const names = new Set<string>()
  for (const match of code.matchAll(/(?:from\s+|import\s+|require\()\s*['"]([^'".][^'"]*)['"]/g)) {
    if (!match[1].startsWith('node:') && match[1] !== 'fastify-hono' && !match[1].startsWith('fastify-hono/')) names.add(match[1])
  }
  return [...names].filter((name) => {
    try {
      load.resolve(name)
      return false
    } catch {
      return true
    }
  })
}

/**
 * A directory where the samples run as a user's project would: its
 * node_modules holds this project's packages, and `fastify-hono` is this
 * package, built (dist/), resolved through its own exports.
 */
function sandbox (): string {
  const dir = mkdtempSync(join(tmpdir(), 'fastify-hono-samples-'))
  const modules = join(dir, 'node_modules')
  mkdirSync(modules)
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry.startsWith('.')) continue
    symlinkSync(join(root, 'node_modules', entry), join(modules, entry), 'junction')
  }
  symlinkSync(root, join(modules, 'fastify-hono'), 'junction')
  // Preloaded into each sample: the port it was written with becomes a free
  // one, and each listening server says where it is.
  writeFileSync(join(dir, 'preload.cjs'), `
    const net = require('node:net')
    const listen = net.Server.prototype.listen
    net.Server.prototype.listen = function (...args) {
      if (args[0] !== null && typeof args[0] === 'object' && Number(args[0].port) === 3000) args[0] = { ...args[0], port: 0 }
      else if (Number(args[0]) === 3000) args[0] = 0
      this.once('listening', () => {
        const address = this.address()
        process.stderr.write('\\nSAMPLE-LISTENING ' + JSON.stringify(address) + '\\n')
      })
      return listen.apply(this, args)
    }
  `)
  return dir
}

function isTypeScript (sample: Sample): boolean {
  return ['ts', 'typescript', 'mts', 'cts'].includes(sample.lang)
}

/** How Node must load it: a CommonJS sample requires and never imports. */
function extension (sample: Sample): '.mjs' | '.cjs' {
  if (sample.lang === 'cjs' || sample.lang === 'cts') return '.cjs'
  if (sample.lang === 'mjs' || sample.lang === 'mts') return '.mjs'
  return /^\s*import\s/m.test(sample.code) || !/\brequire\(/.test(sample.code) ? '.mjs' : '.cjs'
}

/** Type-checks the TypeScript samples as a user's nodenext project would; returns the diagnostics, formatted. */
function typeCheck (files: string[]): string[] {
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: ['node'],
    strict: true,
    noEmit: true,
    skipLibCheck: true
  })
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where = diagnostic.file !== undefined && diagnostic.start !== undefined
      ? `${diagnostic.file.fileName}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1} `
      : ''
    return where + ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
  })
}

interface Run {
  code: number | null
  signal: NodeJS.Signals | null
  output: string
}

/** Runs one sample: a server is checked then stopped; anything else must exit. */
function runSample (t: Tap.Test, dir: string, file: string, check: Check | undefined): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', join(dir, 'preload.cjs'), file], {
      cwd: dir,
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let output = ''
    let checking = false
    const timer = setTimeout(() => { child.kill('SIGKILL') }, 30_000)
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      const listening = /SAMPLE-LISTENING (.+)/.exec(output)
      if (listening === null || checking) return
      checking = true
      const address = JSON.parse(listening[1]) as { address: string, family: string, port: number }
      const host = address.family === 'IPv6' ? `[${address.address === '::' ? '::1' : address.address}]` : address.address === '0.0.0.0' ? '127.0.0.1' : address.address
      const running: Running = { base: `http://${host}:${address.port}`, output: () => output }
      const done = check === undefined
        ? Promise.reject(new Error('the sample listens, but no check says what it must answer'))
        : check(t, running)
      done.then(() => child.kill('SIGTERM'), (err: unknown) => { child.kill('SIGTERM'); reject(err instanceof Error ? err : new Error(String(err))) })
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, output })
    })
  })
}

test('every JavaScript and TypeScript sample in README.md and docs/ is complete and named, or a fragment of an example', async (t) => {
  t.ok(samples.length >= 10, `${samples.length} samples found`)
  const names = new Set<string>()
  for (const sample of samples) {
    const where = `${sample.file}:${sample.line}`
    const fragment = FRAGMENT.exec(sample.code.split('\n')[0])
    if (fragment !== null) continue
    t.ok(sample.name !== undefined, `${where}: named with <!-- sample: NAME --> (or marked as a fragment)`)
    if (sample.name === undefined) continue
    t.notOk(names.has(sample.name), `${where}: the name ${sample.name} is used once`)
    names.add(sample.name)
    t.ok(checks[sample.name] !== undefined, `${where}: sample ${sample.name} has its check here`)
  }
  t.same(Object.keys(checks).filter((name) => !names.has(name)), [], 'no check without its sample')
})

test('no JavaScript hides in a block without a language', async (t) => {
  for (const file of documents()) {
    for (const block of codeBlocks(readFileSync(join(root, file), 'utf8'))) {
      if (block.lang !== '') continue
      t.notMatch(block.code, /^\s*(import\s.+from\s|const\s.+=\s*require\(|await\s+\w+\.register\()/m, `${file}:${block.line}: code, so it needs js or ts (and a sample name)`)
    }
  }
})

test('fragments: the example they name exists and holds each of their lines, in order', async (t) => {
  for (const sample of samples) {
    const fragment = FRAGMENT.exec(sample.code.split('\n')[0])
    if (fragment === null) continue
    const example = join(root, fragment[1])
    t.ok(existsSync(example), `${sample.file}:${sample.line}: ${fragment[1]} exists`)
    if (!existsSync(example)) continue
    const lines = readFileSync(example, 'utf8').split('\n').map((line) => line.trim())
    let at = 0
    for (const line of sample.code.split('\n').slice(1).map((line) => line.trim()).filter((line) => line !== '' && line !== '// …' && line !== '…')) {
      const found = lines.indexOf(line, at)
      t.ok(found !== -1, `${sample.file}:${sample.line}: ${fragment[1]} holds \`${line}\``)
      if (found !== -1) at = found + 1
    }
  }
})

test('complete samples run against the built package and do what the page says', async (t) => {
  t.ok(existsSync(join(root, 'dist', 'index.mjs')), 'dist/ is built (npm run build)')
  const dir = sandbox()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))

  const complete = samples.filter((sample) => sample.name !== undefined && FRAGMENT.exec(sample.code.split('\n')[0]) === null)
  const files = new Map<Sample, string>()
  const typed: string[] = []
  for (const sample of complete) {
    const base = join(dir, sample.name as string)
    if (isTypeScript(sample)) {
      const source = base + (extension(sample) === '.cjs' ? '.cts' : '.mts')
      writeFileSync(source, sample.code)
      typed.push(source)
      const output = ts.transpileModule(sample.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false } }).outputText
      writeFileSync(base + extension(sample), output)
    } else {
      writeFileSync(base + extension(sample), sample.code)
    }
    files.set(sample, base + extension(sample))
  }

  if (typed.length > 0) {
    t.same(typeCheck(typed), [], `the TypeScript samples type-check (${typed.length})`)
  }

  for (const sample of complete) {
    const name = sample.name as string
    const missing = missingPackages(sample.code)
    const skip = missing.length > 0 ? `needs ${missing.join(', ')}` : await unsupported(sample)
    await t.test(`${name} (${sample.file}:${sample.line})`, { skip }, async (t) => {
      const run = await runSample(t, dir, files.get(sample) as string, checks[name])
      const listened = run.output.includes('SAMPLE-LISTENING')
      t.ok(listened, 'it started a server (every sample here is a server)')
      t.ok(run.signal === 'SIGTERM' || run.code === 0, `stopped cleanly (code ${run.code}, signal ${run.signal})`)
      t.notMatch(run.output, /Error:|Warning:|DeprecationWarning|FSTDEP/, 'no error or warning printed')
    })
  }
})
