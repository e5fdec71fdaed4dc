// Router options passed the way the installed Fastify takes them: under
// `routerOptions` where it has them (the top-level ones print the FSTDEP022
// deprecation warning since 5.x added it), at the top level on the older
// 5.x releases the CI floor run installs, which ignore `routerOptions`.
import Fastify, { type FastifyInstance } from 'fastify'

/** A Fastify that folds case in paths (`caseSensitive: false`), without a deprecation warning. */
export async function caseInsensitiveFastify (): Promise<FastifyInstance> {
  const probe = Fastify({ routerOptions: { caseSensitive: false } })
  probe.get('/probe', async () => 'ok')
  const folds = (await probe.inject('/PROBE')).statusCode === 200
  await probe.close()
  return folds ? Fastify({ routerOptions: { caseSensitive: false } }) : Fastify({ caseSensitive: false } as Parameters<typeof Fastify>[0])
}
