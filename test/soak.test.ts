import { test } from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'

// The soak run of bench/soak.mjs, cut down for CI: 20,000 requests (the full
// run is 200,000, see docs/reliability.md). The script owns the checks (heap
// and handles back to the baseline, no listener growth, no error answer); this
// test runs it, bounded in time, and reads its verdict.
const REQUESTS = 20_000
const TIME_LIMIT = 50_000 // ms: tap's limit for the file is 60 s

interface Verdict {
  verdict: 'pass' | 'fail' | 'error'
  error?: string
  failures: string[]
  requests: { target: number, completed2xx: number, non2xx: number, errors: number, timeouts: number }
  mix: Record<string, number>
  heap: { baselineMB: number, afterMB: number, limitMB: number }
  handles: { baseline: number, after: number, limit: number }
  connections: { baseline: number, after: number }
  listeners: { unchanged: boolean }
  probe: { checks: number, failures: number, keptOneConnection: boolean }
}

function runSoak (args: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', join(__dirname, '..', 'bench', 'soak.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    // SIGTERM first; the soak's server child exits when its parent's IPC channel goes.
    const timer = setTimeout(() => { child.kill() }, TIME_LIMIT)
    child.on('error', reject)
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }) })
  })
}

test(`soak: ${REQUESTS.toLocaleString('en')} mixed keep-alive requests leave no heap, handle or listener growth`, async (t) => {
  const { code, stdout, stderr } = await runSoak([`--requests=${REQUESTS}`])
  const line = stdout.trim().split('\n').at(-1) ?? ''
  let verdict: Verdict
  try {
    verdict = JSON.parse(line)
  } catch {
    t.fail(`no JSON verdict (exit ${code}): ${stdout.slice(-500)} ${stderr.slice(-500)}`)
    return
  }
  t.equal(verdict.verdict, 'pass', `verdict ${verdict.verdict}${verdict.verdict === 'pass' ? '' : ': ' + (verdict.error ?? verdict.failures.join('; '))}`)
  t.equal(code, 0, 'exit status 0')
  t.equal(verdict.requests.completed2xx, REQUESTS, 'every request answered 2xx')
  t.equal(verdict.requests.non2xx + verdict.requests.errors + verdict.requests.timeouts, 0, 'no error, timeout or non-2xx')
  for (const kind of ['mixed', 'echo', 'stream', 'sse']) t.ok(verdict.mix[kind] > 0, `the load included ${kind} requests`)
  t.ok(verdict.heap.afterMB <= verdict.heap.limitMB, `heap ${verdict.heap.afterMB} MB after, baseline ${verdict.heap.baselineMB} MB, limit ${verdict.heap.limitMB} MB`)
  t.ok(verdict.handles.after <= verdict.handles.limit, `handles ${verdict.handles.after} after, baseline ${verdict.handles.baseline}`)
  t.equal(verdict.connections.after, verdict.connections.baseline, 'the same open connections as at the baseline')
  t.ok(verdict.listeners.unchanged, 'no listener growth on the server, the kept socket or process')
  t.ok(verdict.probe.checks > 0 && verdict.probe.failures === 0 && verdict.probe.keptOneConnection, 'the probe connection saw exact answers throughout, on one connection')
  t.comment(`soak: ${line}`)
})
