'use strict'

// neostandard, the style of the @fastify/* plugins, with TypeScript support.
// `npm run lint` (plain `eslint`) lints lib/, test/, types/, bench/, examples/
// and the files at the root; build output and benchmark results are skipped.
module.exports = require('neostandard')({
  ts: true,
  // neostandard's TypeScript config covers *.ts only: the ES module entry
  // (lib/index.mts) and the type tests (types/*.mts, *.cts) are TypeScript too.
  filesTs: ['**/*.mts', '**/*.cts'],
  ignores: [
    'dist/',
    'node_modules/',
    'bench/results/',
    'coverage/',
    '.tap/',
    '.ci/nodes/node_modules/'
  ]
})
