// Child processes pinned to one core, talking over IPC with request/reply
// messages. Every child also exits when its parent goes away.
import { spawn, spawnSync } from 'node:child_process'
import os from 'node:os'

/** Cores for the server and the load generator, or null when pinning is impossible. */
export function pinningCores () {
  if (os.availableParallelism() < 2) return null
  const probe = spawnSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' })
  return probe.status === 0 ? { server: 0, load: 1 } : null
}

/**
 * The `--node-flags="--a --b"` option's value as a list of flags for the
 * server processes; each must start with `--`.
 */
export function parseNodeFlags (value) {
  const flags = value === undefined ? [] : value.split(' ').filter((flag) => flag !== '')
  for (const flag of flags) if (!flag.startsWith('--')) throw new Error(`--node-flags takes flags that start with --, not "${flag}"`)
  return flags
}

/** Starts `node ...nodeFlags script ...args`, pinned to `core` when it is a number. */
export function startChild (script, args, core, nodeFlags = []) {
  const nodeArgs = [...nodeFlags, script, ...args]
  const child = core === null || core === undefined
    ? spawn(process.execPath, nodeArgs, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    : spawn('taskset', ['-c', String(core), process.execPath, ...nodeArgs], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const pending = new Map()
  let nextId = 0
  let exited = false
  child.on('message', (message) => {
    const entry = pending.get(message.id)
    if (entry === undefined) return
    pending.delete(message.id)
    if (message.error !== undefined) entry.reject(new Error(`${script} ${args.join(' ')}: ${message.error}`))
    else entry.resolve(message)
  })
  child.on('exit', (code, signal) => {
    exited = true
    for (const entry of pending.values()) entry.reject(new Error(`${script} ${args.join(' ')} exited (${signal ?? code})`))
    pending.clear()
  })
  return {
    child,
    /** Sends a message and resolves with the child's reply to it. */
    call (message, timeoutMs = 60_000) {
      if (exited) return Promise.reject(new Error(`${script} ${args.join(' ')} is not running`))
      const id = nextId++
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id)
          reject(new Error(`${script} ${args.join(' ')}: no reply to ${message.type} in ${timeoutMs} ms`))
        }, timeoutMs)
        pending.set(id, {
          resolve: (value) => { clearTimeout(timer); resolve(value) },
          reject: (err) => { clearTimeout(timer); reject(err) }
        })
        child.send({ ...message, id })
      })
    },
    /** Asks the child to stop, and kills it if it has not exited shortly after. */
    async stop () {
      if (exited) return
      const gone = new Promise((resolve) => child.once('exit', resolve))
      if (child.connected) child.disconnect()
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000)
      await gone
      clearTimeout(timer)
    }
  }
}

/**
 * For the child side: answers each request with `handler(message)`, and
 * exits when the parent disconnects or after `maxLifetimeMs` at most.
 */
export function serveParent (handler, maxLifetimeMs) {
  process.on('message', async (message) => {
    try {
      process.send({ ...(await handler(message)), id: message.id })
    } catch (err) {
      process.send({ id: message.id, error: err?.stack ?? String(err) })
    }
  })
  process.on('disconnect', () => process.exit(0))
  setTimeout(() => {
    console.error(`${process.argv[1]}: still running after ${maxLifetimeMs} ms, exiting`)
    process.exit(3)
  }, maxLifetimeMs).unref()
}
