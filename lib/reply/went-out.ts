import type { FastifyReply } from 'fastify'
import type { SendReason } from './reasons.js'

/** The way out as the log line names it. */
const LOGGED = { fast: 'fast writer', stream: 'stream writer', 'reply.send': 'reply.send', 'the app itself': 'the app itself' } as const

/** A way a response went, as the plan names it (after onSend hooks, the way the payload they handed back took). */
type Went = keyof typeof LOGGED
type LoggedWay = typeof LOGGED[Went]

/**
 * At Fastify's `debug` log level, one line per response: which way it went;
 * for reply.send, the guard that sent it there; and how many onSend hooks
 * the plugin ran before writing (then `guard` names why the response was
 * prepared as reply.send would). Nothing at `info`, and no object is built
 * unless the level is on (pino's isLevelEnabled; a logger without it is
 * never asked).
 */
export function wentOut (reply: FastifyReply, went: Went, guard?: SendReason, onSendHooks?: number): void {
  const log = reply.log as FastifyReply['log'] & { isLevelEnabled?: (level: string) => boolean }
  if (log.isLevelEnabled?.('debug') !== true) return
  const way = LOGGED[went]
  const hooks = onSendHooks === undefined ? '' : `, after ${onSendHooks} onSend hook${onSendHooks === 1 ? '' : 's'}`
  const because = guard === undefined ? '' : `, because of ${guard}`
  const line: { wayOut: LoggedWay, guard?: SendReason, onSendHooks?: number } = { wayOut: way }
  if (guard !== undefined) line.guard = guard
  if (onSendHooks !== undefined) line.onSendHooks = onSendHooks
  log.debug(line, `fastify-hono: ${way}${hooks}${because}`)
}
