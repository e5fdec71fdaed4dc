#!/usr/bin/env node
// The floor and newest runs: the tap suite and the type tests, on the built
// plugin (dist/, from `npm test`), against other fastify and hono versions.
//
//   node .ci/compat.mjs floor              install .ci/floor/package-lock.json (npm ci) and run
//   node .ci/compat.mjs floor --update-lock  resolve .ci/floor/package.json afresh, rewrite the lock, run
//   node .ci/compat.mjs floor-ws [--update-lock]  the same with .ci/floor-ws/
//   node .ci/compat.mjs fastify6 [--update-lock]  the next Fastify major: .ci/fastify6/ (see below)
//   node .ci/compat.mjs newest             the repo's lock, then the newest published version inside
//                                          each peer range, on the major the repo's lock has (fastify 5,
//                                          hono 4, and any peer added later); a newer major the range
//                                          admits has a set of its own (fastify6)
//
// The floor: .ci/floor/package.json pins, exactly, the lowest version of each
// peer range and the test partners (devDependencies) that accept them. A
// feature with a higher floor of its own has a floor set of its own, which
// runs only its tests: .ci/floor-ws/ (fastify-hono/ws needs hono 4.6.7, and
// `ws` at its lowest, 8.0.0), whose package.json lists them under `run`.
//
// The next major: .ci/fastify6/package.json does not list devDependencies of
// its own but `replace`s some of the repo's (fastify, pinned to the newest 6
// release its lock was made with) and keeps the rest; its lock starts from
// the repo's, so every other package is the version the repo locks. Its
// `engines.node` is the Node it needs (Fastify 6: 24 or later): run it with
// that Node first on PATH. Its `track` range is where --update-lock looks for
// the newest release to pin; a plain run only reports a newer one. Its
// `overrides` go into the package.json it installs with: a test partner whose
// peer range leaves out a prerelease (fastify-metrics: fastify `>=5`, which
// 6.0.0-alpha.4 does not satisfy) would make `npm ci` fail with ERESOLVE.
// Tests that need a plugin which refuses this Fastify (an @fastify/* plugin
// with no release for it, on a Fastify that is not an alpha or rc) skip by
// detection, saying why (test/helpers/plugin-loads.ts).
//
// Tests that need a module an older version lacks skip by feature detection
// (test/helpers/optional.ts), saying why; so do type tests (types/*.test-d.*)
// and test files that import a package the floor does not install, or an
// entry of the plugin that does not load there (fastify-hono/ws on hono 4.1).
//
// How: the suite runs inside a copy of the repo (the files git tracks or
// would track, plus dist/) in a temporary directory, whose package.json is
// the repo's with its devDependencies replaced, and whose node_modules is
// installed there. A separate node_modules reached by NODE_PATH would not do:
// ESM imports ignore NODE_PATH, and the tests load the plugin by its own
// name (`fastify-hono`, the package's self-reference), which resolves from
// the package root. The repo's own node_modules is never touched.
// FASTIFY_HONO_KEEP=1 keeps the copy for a look afterwards.
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const [mode, flag] = process.argv.slice(2)
// A set: a directory under .ci/ with a package.json and its lock.
const floorDir = /^(floor(-[a-z]+)?|fastify6)$/.test(mode ?? '') ? join(root, '.ci', mode) : undefined
if (mode !== 'newest' && (floorDir === undefined || !existsSync(join(floorDir, 'package.json')))) {
  console.error('usage: node .ci/compat.mjs floor|floor-ws|fastify6 [--update-lock] | newest')
  process.exit(2)
}
const set = floorDir === undefined ? undefined : JSON.parse(readFileSync(join(floorDir, 'package.json'), 'utf8'))
const needsNode = /^>=\s*(\d+)/.exec(set?.engines?.node ?? '')?.[1]
if (needsNode !== undefined && Number(process.versions.node.split('.')[0]) < Number(needsNode)) {
  console.error(`the ${mode} set needs Node ${set.engines.node}; this is ${process.version}: put a newer node first on PATH (.ci/nodes/node_modules/node24/bin)`)
  process.exit(2)
}
if (!existsSync(join(root, 'dist/index.js'))) {
  console.error('dist/ is missing: run `npm run build` (or `npm test`) first')
  process.exit(2)
}

const sh = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: 'inherit' })

// Version order (semver's precedence; enough for the release and prerelease
// versions of these packages): `npm view name@range version` lists in
// publication order, not in version order.
function compareVersions (a, b) {
  const [coreA, preA] = a.split(/-(.*)/s)
  const [coreB, preB] = b.split(/-(.*)/s)
  const numbers = (core) => core.split('.').map(Number)
  for (const [x, y] of numbers(coreA).map((n, i) => [n, numbers(coreB)[i]])) if (x !== y) return x - y
  if (preA === undefined || preB === undefined) return (preA === undefined ? 1 : 0) - (preB === undefined ? 1 : 0)
  const idsA = preA.split('.')
  const idsB = preB.split('.')
  for (let i = 0; i < Math.min(idsA.length, idsB.length); i++) {
    const [x, y] = [idsA[i], idsB[i]]
    if (x === y) continue
    const [nx, ny] = [/^\d+$/.test(x), /^\d+$/.test(y)]
    if (nx && ny) return Number(x) - Number(y)
    if (nx !== ny) return nx ? -1 : 1
    return x < y ? -1 : 1
  }
  return idsA.length - idsB.length
}

/** The highest published version of `name` inside `range`, as npm resolves the range. */
function newestIn (name, range) {
  const versions = [].concat(JSON.parse(execFileSync('npm', ['view', `${name}@${range}`, 'version', '--json']).toString() || '[]'))
  if (versions.length === 0) throw new Error(`no published ${name} inside ${range}`)
  return versions.sort(compareVersions).at(-1)
}
const work = mkdtempSync(join(tmpdir(), `fastify-hono-${mode}-`))
let status = 1
try {
  // The working tree as git sees it (tracked and untracked, not ignored), and dist/.
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: root })
    .toString().split('\0').filter((file) => file !== '' && existsSync(join(root, file)))
  for (const file of files) {
    mkdirSync(dirname(join(work, file)), { recursive: true })
    cpSync(join(root, file), join(work, file))
  }
  cpSync(join(root, 'dist'), join(work, 'dist'), { recursive: true })

  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  // A floor set of one feature runs only its own tests: { tests: [...], types: [...] }.
  let only
  if (floorDir !== undefined) {
    only = set.run
    if (set.replace !== undefined && flag === '--update-lock') {
      // Pin the newest release inside each tracked range.
      for (const [name, range] of Object.entries(set.track ?? {})) set.replace[name] = newestIn(name, range)
      writeFileSync(join(floorDir, 'package.json'), JSON.stringify(set, null, 2) + '\n')
    }
    pkg.devDependencies = set.replace !== undefined ? { ...pkg.devDependencies, ...set.replace } : set.devDependencies
    if (set.overrides !== undefined) pkg.overrides = set.overrides
    writeFileSync(join(work, 'package.json'), JSON.stringify(pkg, null, 2) + '\n')
    if (flag === '--update-lock') {
      // A set that replaces a few packages starts from the repo's lock (the
      // rest stays as locked); a floor resolves afresh.
      if (set.replace === undefined) rmSync(join(work, 'package-lock.json'), { force: true })
      sh('npm', ['install', '--no-audit', '--no-fund'], work)
      cpSync(join(work, 'package-lock.json'), join(floorDir, 'package-lock.json'))
    } else {
      cpSync(join(floorDir, 'package-lock.json'), join(work, 'package-lock.json'))
      try {
        sh('npm', ['ci', '--no-audit', '--no-fund'], work)
      } catch (err) {
        // A set that replaces a few of the repo's devDependencies goes out of
        // sync whenever the repo's change.
        if (set.replace !== undefined) console.error(`the ${mode} lock no longer matches the repo's devDependencies: node .ci/compat.mjs ${mode} --update-lock`)
        throw err
      }
    }
  } else {
    sh('npm', ['ci', '--no-audit', '--no-fund'], work)
    // The highest published version inside each declared peer range, on the
    // major the repo's lock installed: `^5.0.0 || ^6.0.0-0` means fastify 5
    // here (Fastify 6 needs a newer Node, and has its set: fastify6).
    // Every peer dependency: a new one (ws, for WebSockets) joins by itself.
    const wanted = Object.entries(pkg.peerDependencies).map(([name, range]) => {
      const locked = JSON.parse(readFileSync(join(work, 'node_modules', name, 'package.json'), 'utf8')).version
      const major = locked.split('.')[0]
      const sameMajor = range.split('||').map((part) => part.trim()).filter((part) => new RegExp(`^[\\^~>=]*${major}\\.`).test(part))
      if (sameMajor.length === 0) throw new Error(`${name}: the peer range ${range} has no part for the locked major ${major} (${locked})`)
      return `${name}@${newestIn(name, sameMajor.join(' || '))}`
    })
    sh('npm', ['install', '--no-save', '--no-audit', '--no-fund', ...wanted], work)
  }

  const installed = Object.keys(pkg.peerDependencies).filter((name) => existsSync(join(work, 'node_modules', name, 'package.json'))).map((name) =>
    `${name} ${JSON.parse(readFileSync(join(work, 'node_modules', name, 'package.json'), 'utf8')).version}`)
  console.log(`=== ${mode} run: ${installed.join(', ')}, Node ${process.version} ===`)
  // A type test that imports a package this install lacks (a partner with
  // no version accepting the floor), or an entry of the plugin that does not
  // load here, is left out, and says so.
  const loads = new Map()
  const missing = (specifier) => {
    if (/^(node:|\.)/.test(specifier) || specifier === 'fastify-hono') return undefined
    if (specifier.startsWith('fastify-hono/')) {
      if (!loads.has(specifier)) {
        const tried = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(specifier)})`], { cwd: work, encoding: 'utf8' })
        loads.set(specifier, tried.status === 0 ? undefined : `${specifier} does not load here (${/^\w*Error: (.*)$/m.exec(tried.stderr)?.[1] ?? 'see its error'})`)
      }
      return loads.get(specifier)
    }
    const name = specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')
    return existsSync(join(work, 'node_modules', name, 'package.json')) ? undefined : `${name} not installed in the ${mode} run`
  }
  const lackingIn = (text, pattern) => [...new Set([...text.matchAll(pattern)].map((match) => match[1] ?? match[2]))]
    .map(missing).filter((reason) => reason !== undefined)
  const typeTests = readdirSync(join(work, 'types')).filter((file) => /\.test-d\.[cm]?[jt]s$/.test(file))
  const excluded = typeTests.filter((file) => only === undefined || only.types.includes(`types/${file}`)).filter((file) => {
    const lacking = lackingIn(readFileSync(join(work, 'types', file), 'utf8'), /from '([^']+)'|require\('([^']+)'\)/g)
    if (lacking.length > 0) console.log(`types/${file}: skipped, ${lacking.join('; ')}`)
    return lacking.length > 0
  }).concat(typeTests.filter((file) => only !== undefined && !only.types.includes(`types/${file}`)))
  if (excluded.length > 0) {
    renameSync(join(work, 'types/tsconfig.json'), join(work, 'types/tsconfig.suite.json'))
    writeFileSync(join(work, 'types/tsconfig.json'), JSON.stringify({ extends: './tsconfig.suite.json', exclude: excluded }, null, 2) + '\n')
  }
  // The same for a tap test file: one that imports an absent package at its
  // top (a partner left out of the floor) is left out, and says so.
  const testFiles = readdirSync(join(work, 'test')).filter((file) => /\.test\.[cm]?[jt]s$/.test(file))
  const excludedTests = testFiles.filter((file) => only === undefined || only.tests.includes(`test/${file}`)).filter((file) => {
    const lacking = lackingIn(readFileSync(join(work, 'test', file), 'utf8'), /^import (?!type )[^\n]*? from '([^']+)'/gm)
    if (lacking.length > 0) console.log(`test/${file}: skipped, ${lacking.join('; ')}`)
    return lacking.length > 0
  }).concat(testFiles.filter((file) => only !== undefined && !only.tests.includes(`test/${file}`)))
  if (only !== undefined) console.log(`${mode}: only ${[...only.tests, ...only.types].join(', ')}`)
  if (excludedTests.length > 0) {
    const runPkg = JSON.parse(readFileSync(join(work, 'package.json'), 'utf8'))
    runPkg.tap.exclude = [...(runPkg.tap.exclude ?? []), ...excludedTests.map((file) => `test/${file}`)]
    writeFileSync(join(work, 'package.json'), JSON.stringify(runPkg, null, 2) + '\n')
  }
  const types = spawnSync('npm', ['run', 'test:types'], { cwd: work, stdio: 'inherit' })
  // The hostile-input corpus's 45-s bound is set for the locked versions;
  // fastify 5.0 / hono 4.1 answer it about 2.5 times slower (measured), so
  // the floor sends 300 cases per category instead of 800.
  const env = { ...process.env, FASTIFY_HONO_RUN: mode, ...(mode.startsWith('floor') && process.env.HOSTILE_PER_CATEGORY === undefined ? { HOSTILE_PER_CATEGORY: '300' } : {}) }
  const tap = spawnSync(process.execPath, ['node_modules/.bin/tap'], { cwd: work, stdio: 'inherit', env })
  console.log(`=== ${mode} run (${installed.join(', ')}): types ${types.status === 0 ? 'pass' : 'FAIL'}, tap ${tap.status === 0 ? 'pass' : 'FAIL'} ===`)
  status = types.status === 0 && tap.status === 0 ? 0 : 1
  // A newer release inside a tracked range: reported, never failing (the
  // lock decides what runs; --update-lock moves it).
  for (const [name, range] of Object.entries(set?.track ?? {})) {
    try {
      const newest = newestIn(name, range)
      if (newest !== set.replace[name]) console.log(`NOTE: ${name} ${newest} is published (${range}); the ${mode} set runs ${set.replace[name]}: node .ci/compat.mjs ${mode} --update-lock moves it`)
      else console.log(`${mode}: ${name} ${newest} is the newest inside ${range}`)
    } catch (err) {
      console.log(`NOTE: could not look up the newest ${name} inside ${range}: ${err.message}`)
    }
  }
} finally {
  if (process.env.FASTIFY_HONO_KEEP === '1') console.log(`kept ${work}`)
  else rmSync(work, { recursive: true, force: true })
}
process.exit(status)
