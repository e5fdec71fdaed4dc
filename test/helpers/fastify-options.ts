// Fastify options whose place differs between the majors the peer range
// admits, chosen by what the installed Fastify does, never by its version.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'

/**
 * A Fastify that folds case in paths. Fastify 5.0 has `caseSensitive` at
 * the top level only; later 5.x also take it under `routerOptions`; Fastify 6
 * takes it only there (the top-level option is gone from its typings).
 */
export async function caseInsensitiveFastify (): Promise<FastifyInstance> {
  const probe = Fastify({ routerOptions: { caseSensitive: false } })
  probe.get('/probe', async () => 'ok')
  // A probe of the router, not of the answers under test: inject() is enough.
  const folds = (await probe.inject('/PROBE')).statusCode === 200
  await probe.close()
  return folds ? Fastify({ routerOptions: { caseSensitive: false } }) : Fastify({ caseSensitive: false } as FastifyServerOptions)
}

/** A Fastify with `caseSensitive` as given (true is Fastify's default), without the FSTDEP022 warning the top-level option prints. */
export async function fastifyWithCase (caseSensitive: boolean): Promise<FastifyInstance> {
  return caseSensitive ? Fastify() : await caseInsensitiveFastify()
}
