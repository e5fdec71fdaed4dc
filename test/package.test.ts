import { test } from 'tap'
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { brokenLink, relativeLinks } from './helpers/markdown'

const run = promisify(execFile)

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

// What `npm pack` puts in the tarball, which is what `npm publish` uploads.
// Reads dist/ as built: `npm test` builds first.
test('npm pack: the tarball holds what a consumer needs, and works installed on its own', async (t) => {
  t.ok(existsSync(join(cwd, 'dist', 'index.js')), 'dist/ is built (npm run build)')
  const tmp = mkdtempSync(join(tmpdir(), 'fastify-hono-pack-'))
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }))

  // --ignore-scripts: packing must not rebuild dist/ while other test files read it.
  const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], { cwd, timeout: 60_000 })
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string }>
  const tarball = join(tmp, info.filename)
  // The tarball itself, not npm's report of it: every entry sits under package/.
  const listed = (await run('tar', ['-tzf', tarball], { timeout: 30_000 })).stdout.split('\n').filter(Boolean)
  t.ok(listed.every((entry) => entry.startsWith('package/')), 'every entry is under package/')
  const files = listed.filter((entry) => !entry.endsWith('/')).map((entry) => entry.slice('package/'.length)).sort()

  // docs/ ships because the README links to it: its links must resolve in
  // node_modules/fastify-hono and on a registry page too.
  t.test('contents: package.json, README.md, LICENSE, CHANGELOG.md, docs/ and dist/, nothing else', async (t) => {
    for (const file of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'dist/index.js', 'dist/index.mjs', 'dist/index.d.ts', 'dist/index.d.mts', 'dist/index.js.map', 'dist/index.mjs.map']) {
      t.ok(files.includes(file), `ships ${file}`)
    }
    // The pages, and the charts they show (an image must travel with its page).
    const docs = readdirSync(join(cwd, 'docs')).filter((file) => /\.(md|svg)$/.test(file)).map((file) => `docs/${file}`).sort()
    t.same(files.filter((file) => file.startsWith('docs/')), docs, 'ships every docs/*.md and docs/*.svg, and nothing else from docs/')
    const shippable = /^dist\/.+\.(js|mjs|d\.ts|d\.mts|js\.map|mjs\.map)$|^docs\/[^/]+\.(md|svg)$/
    const extra = files.filter((file) => !['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'].includes(file) && !shippable.test(file))
    t.same(extra, [], 'no file outside that list')
    for (const dir of ['lib/', 'test/', 'bench/', 'examples/', 'types/', '.ci/', 'node_modules/']) {
      t.same(files.filter((file) => file.startsWith(dir)), [], `nothing from ${dir}`)
    }
    t.same(files.filter((file) => /(^|\/)tsconfig[^/]*\.json$|(^|\/)\.[^/]+$/.test(file)), [], 'no tsconfig, no dotfiles')
    // Every dist/ module comes from a lib/ source of today: a file left over
    // from an older layout would be published too.
    const stale = files.filter((file) => file.startsWith('dist/')).filter((file) => {
      const base = file.slice('dist/'.length).replace(/\.(d\.ts|d\.mts|js\.map|mjs\.map|js|mjs)$/, '')
      const source = /\.(mjs|d\.mts|mjs\.map)$/.test(file) ? `${base}.mts` : `${base}.ts`
      return !existsSync(join(cwd, 'lib', source))
    })
    t.same(stale, [], 'no dist/ file without a lib/ source')
  })

  // The ecosystem's own checks of a package, on the tarball itself:
  // @arethetypeswrong/cli resolves every entry point's types and JavaScript
  // under each of TypeScript's module resolutions (node10 included, which
  // `moduleResolution: node` projects use), and publint lints package.json
  // against the files shipped. Neither replaces a check above or below:
  // those hold what is shipped, the links, the maps, and what a consumer
  // gets at run time.
  const attw = join(cwd, 'node_modules', '.bin', 'attw')
  const publint = join(cwd, 'node_modules', '.bin', 'publint')
  t.test('@arethetypeswrong/cli: every entry point resolves under node10, node16 (CJS and ESM) and bundler, with no problem', { skip: existsSync(attw) ? false : '@arethetypeswrong/cli is not installed (a compatibility run\'s set)' }, async (t) => {
    const result = await run(attw, [tarball, '--format', 'json'], { cwd, timeout: 120_000 }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }))
    const report = JSON.parse(result.stdout) as { analysis: { entrypoints: Record<string, { resolutions: Record<string, { resolution?: { fileName?: string } }> }> }, problems?: Record<string, unknown[]> }
    t.same(Object.keys(report.analysis.entrypoints).sort(), ['.', './package.json', './ws'], 'the entry points of the exports map')
    for (const [entry, { resolutions }] of Object.entries(report.analysis.entrypoints)) {
      for (const kind of ['node10', 'node16-cjs', 'node16-esm', 'bundler']) {
        t.ok(resolutions[kind]?.resolution?.fileName !== undefined, `${entry} resolves under ${kind}`)
      }
    }
    t.same(Object.values(report.problems ?? {}).flat(), [], 'no problems')
  })

  t.test('publint --strict: package.json agrees with the files shipped', { skip: existsSync(publint) ? false : 'publint is not installed (a compatibility run\'s set)' }, async (t) => {
    const { stdout } = await run(publint, ['run', tarball, '--strict'], { cwd, timeout: 120_000 })
    t.match(stdout, /All good!/)
  })

  const consumer = join(tmp, 'consumer')
  const installed = join(consumer, 'node_modules', 'fastify-hono')
  mkdirSync(join(tmp, 'extract'))
  await run('tar', ['-xzf', tarball, '-C', join(tmp, 'extract')], { timeout: 30_000 })
  mkdirSync(dirname(installed), { recursive: true })
  renameSync(join(tmp, 'extract', 'package'), installed)

  t.test('source maps: every shipped map carries the content of each of its sources', async (t) => {
    const maps = files.filter((file) => file.endsWith('.map'))
    t.ok(maps.length > 0, 'maps are shipped')
    for (const file of maps) {
      const map = JSON.parse(readFileSync(join(installed, file), 'utf8')) as { file: string, sources: string[], sourcesContent?: Array<string | null> }
      t.ok(map.sources.length > 0, `${file} names its sources`)
      t.equal(map.sourcesContent?.length, map.sources.length, `${file} has sourcesContent for each source`)
      t.ok(map.sourcesContent?.every((content) => typeof content === 'string' && content.length > 0), `${file}: no source left empty`)
      t.ok(files.includes(join(dirname(file), map.file).replaceAll('\\', '/')), `${file} maps a shipped file`)
    }
  })

  // The README as npm shows it and as node_modules/fastify-hono holds it:
  // each relative link (and image) names a file in the tarball, and each
  // anchor into a Markdown file a heading there.
  t.test('README: every relative link resolves inside the tarball', async (t) => {
    const links = relativeLinks(readFileSync(join(installed, 'README.md'), 'utf8'))
    t.ok(links.length >= 10, `the README links to the docs (${links.length} links)`)
    for (const link of links) {
      const problem = brokenLink(installed, '.', link, files, 'README.md')
      t.equal(problem, undefined, `README.md → ${link}`)
    }
  })

  // The shipped docs link to each other and to the README; the repository's
  // bench/ (figures, not shipped) is named as a path, never linked.
  t.test('docs/: every relative link resolves inside the tarball', async (t) => {
    for (const doc of files.filter((file) => file.startsWith('docs/'))) {
      for (const link of relativeLinks(readFileSync(join(installed, doc), 'utf8'))) {
        t.equal(brokenLink(installed, 'docs', link, files, doc), undefined, `${doc} → ${link}`)
      }
    }
  })

  // The installed package's dependencies and peers, linked from this
  // project's node_modules; nothing else is installed beside it.
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { dependencies?: Record<string, string>, peerDependencies?: Record<string, string> }
  const linked = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]
  for (const name of linked) {
    const link = join(consumer, 'node_modules', name)
    mkdirSync(dirname(link), { recursive: true })
    symlinkSync(join(cwd, 'node_modules', name), link, 'junction')
  }
  // A plain Node consumer: no loader of the test runner's in its options.
  const env = { ...process.env, NODE_OPTIONS: '' }

  t.test('installed from the tarball: require() loads it and it serves over a socket', async (t) => {
    writeFileSync(join(consumer, 'require.cjs'), `
      const Fastify = require('fastify')
      const { Hono } = require('hono')
      const fastifyHono = require('fastify-hono')
      async function main () {
        const server = Fastify()
        await server.register(fastifyHono, { app: new Hono().get('/', (c) => c.text('required')), prefix: '/c' })
        await server.listen({ port: 0, host: '127.0.0.1' })
        try {
          const res = await fetch('http://127.0.0.1:' + server.server.address().port + '/c')
          console.log(JSON.stringify({
            resolved: require.resolve('fastify-hono'),
            type: typeof fastifyHono,
            default: fastifyHono.default === fastifyHono,
            named: fastifyHono.fastifyHono === fastifyHono,
            status: res.status,
            body: await res.text()
          }))
        } finally {
          await server.close()
        }
      }
      main().catch((err) => { console.error(err); process.exit(1) })
    `)
    const { stdout } = await run(process.execPath, ['require.cjs'], { cwd: consumer, env, timeout: 30_000 })
    t.same(JSON.parse(stdout), {
      resolved: join(installed, 'dist', 'index.js'),
      type: 'function',
      default: true,
      named: true,
      status: 200,
      body: 'required'
    })
  })

  t.test('installed from the tarball: import loads it and it serves over a socket', async (t) => {
    writeFileSync(join(consumer, 'import.mjs'), `
      import { createRequire } from 'node:module'
      import Fastify from 'fastify'
      import { Hono } from 'hono'
      import fastifyHono, { fastifyHono as named } from 'fastify-hono'
      const required = createRequire(import.meta.url)('fastify-hono')
      const server = Fastify()
      await server.register(named, { app: new Hono().get('/', (c) => c.text('imported')), prefix: '/m' })
      await server.listen({ port: 0, host: '127.0.0.1' })
      try {
        const res = await fetch('http://127.0.0.1:' + server.server.address().port + '/m')
        console.log(JSON.stringify({
          resolved: import.meta.resolve('fastify-hono'),
          named: named === fastifyHono,
          sameAsRequire: fastifyHono === required,
          status: res.status,
          body: await res.text()
        }))
      } finally {
        await server.close()
      }
    `)
    const { stdout } = await run(process.execPath, ['import.mjs'], { cwd: consumer, env, timeout: 30_000 })
    t.same(JSON.parse(stdout), {
      resolved: pathToFileURL(join(installed, 'dist', 'index.mjs')).href,
      named: true,
      sameAsRequire: true,
      status: 200,
      body: 'imported'
    })
  })
})
