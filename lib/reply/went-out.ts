import type { FastifyReply } from 'fastify'
import type { SendReason } from './reasons.js'

/**
 * The way out as the log line names it: 'fast writer' is also the plugin's
 * own write of what onSend hooks handed back (on-send.ts).
 */
type LoggedWay = 'fast writer' | 'stream writer' | 'reply.send' | 'the app itself'

/**
 * At Fastify's `debug` log level, one line per response: which way it went;
 * for reply.send, the guard that sent it there; and how many onSend hooks
 * the plugin ran before writing (then `guard` names why the response was
 * prepared as reply.send would). Nothing at `info`, and no object is built
 * unless the level is on (pino's isLevelEnabled; a logger without it is
 * never asked).
 */
export function wentOut (reply: FastifyReply, way: LoggedWay, guard?: SendReason, onSendHooks?: number): void {
  const log = reply.log as FastifyReply['log'] & { isLevelEnabled?: (level: string) => boolean }
  if (log.isLevelEnabled?.('debug') !== true) return
  const hooks = onSendHooks === undefined ? '' : `, after ${onSendHooks} onSend hook${onSendHooks === 1 ? '' : 's'}`
  const because = guard === undefined ? '' : `, because of ${guard}`
  const line: { wayOut: LoggedWay, guard?: SendReason, onSendHooks?: number } = { wayOut: way }
  if (guard !== undefined) line.guard = guard
  if (onSendHooks !== undefined) line.onSendHooks = onSendHooks
  log.debug(line, `fastify-hono: ${way}${hooks}${because}`)
}
