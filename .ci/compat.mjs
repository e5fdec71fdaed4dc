#!/usr/bin/env node
// The floor and newest runs: the tap suite and the type tests, on the built
// plugin (dist/, from `npm test`), against other fastify and hono versions.
//
//   node .ci/compat.mjs floor              install .ci/floor/package-lock.json (npm ci) and run
//   node .ci/compat.mjs floor --update-lock  resolve .ci/floor/package.json afresh, rewrite the lock, run
//   node .ci/compat.mjs floor-ws [--update-lock]  the same with .ci/floor-ws/
//   node .ci/compat.mjs newest             the repo's lock, then the newest published version inside
//                                          each peer range (fastify 5, hono 4, and any peer added later)
//
// The floor: .ci/floor/package.json pins, exactly, the lowest version of each
// peer range and the test partners (devDependencies) that accept them. A
// feature with a higher floor of its own has a floor set of its own, which
// runs only its tests: .ci/floor-ws/ (fastify-hono/ws needs hono 4.6.7, and
// `ws` at its lowest, 8.0.0), whose package.json lists them under `run`.
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
const floorDir = /^floor(-[a-z]+)?$/.test(mode ?? '') ? join(root, '.ci', mode) : undefined
if (mode !== 'newest' && (floorDir === undefined || !existsSync(join(floorDir, 'package.json')))) {
  console.error('usage: node .ci/compat.mjs floor|floor-ws [--update-lock] | newest')
  process.exit(2)
}
if (!existsSync(join(root, 'dist/index.js'))) {
  console.error('dist/ is missing: run `npm run build` (or `npm test`) first')
  process.exit(2)
}

const sh = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: 'inherit' })
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
    const floor = JSON.parse(readFileSync(join(floorDir, 'package.json'), 'utf8'))
    only = floor.run
    pkg.devDependencies = floor.devDependencies
    writeFileSync(join(work, 'package.json'), JSON.stringify(pkg, null, 2) + '\n')
    if (flag === '--update-lock') {
      rmSync(join(work, 'package-lock.json'), { force: true })
      sh('npm', ['install', '--no-audit', '--no-fund'], work)
      cpSync(join(work, 'package-lock.json'), join(floorDir, 'package-lock.json'))
    } else {
      cpSync(join(floorDir, 'package-lock.json'), join(work, 'package-lock.json'))
      sh('npm', ['ci', '--no-audit', '--no-fund'], work)
    }
  } else {
    sh('npm', ['ci', '--no-audit', '--no-fund'], work)
    // The highest published version inside each declared peer range.
    // Every peer dependency: a new one (ws, for WebSockets) joins by itself.
    const wanted = Object.entries(pkg.peerDependencies).map(([name, range]) => {
      const versions = [].concat(JSON.parse(execFileSync('npm', ['view', `${name}@${range}`, 'version', '--json']).toString()))
      return `${name}@${versions.at(-1)}`
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
  const env = { ...process.env, FASTIFY_HONO_RUN: mode, ...(floorDir !== undefined && process.env.HOSTILE_PER_CATEGORY === undefined ? { HOSTILE_PER_CATEGORY: '300' } : {}) }
  const tap = spawnSync(process.execPath, ['node_modules/.bin/tap'], { cwd: work, stdio: 'inherit', env })
  console.log(`=== ${mode} run (${installed.join(', ')}): types ${types.status === 0 ? 'pass' : 'FAIL'}, tap ${tap.status === 0 ? 'pass' : 'FAIL'} ===`)
  status = types.status === 0 && tap.status === 0 ? 0 : 1
} finally {
  if (process.env.FASTIFY_HONO_KEEP === '1') console.log(`kept ${work}`)
  else rmSync(work, { recursive: true, force: true })
}
process.exit(status)
