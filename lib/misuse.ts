import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * The app answers by returning a Response; `c.env.reply` is Fastify's reply,
 * there for headers and cookies. Calling its `send()` or `hijack()` inside
 * the app sends (or gives up) the reply behind the plugin's back, and
 * Fastify would then log "Reply was already sent, did you forget to return
 * reply", which points at the wrong fix; its `code()` is silently overridden
 * by the Response's status. Returns what the mount calls once the app has
 * answered: it warns, once per route and kind of mistake, naming the plugin
 * and the fix, and says whether the reply is already gone (the app's
 * Response is then dropped, its body cancelled).
 */
export function misuseGuard (): (request: FastifyRequest, reply: FastifyReply, response: Response) => boolean {
  const warned = new Set<string>()
  function warnOnce (request: FastifyRequest, kind: string, message: string): void {
    const route = `${request.method} ${request.honoRoute ?? request.routeOptions.url ?? request.url}`
    const key = `${kind} ${route}`
    if (warned.has(key)) return
    warned.add(key)
    request.log.warn(`fastify-hono: ${message.replace('%s', route)}`)
  }
  return function checkReply (request, reply, response) {
    if (reply.sent) {
      // The app wrote c.env.outgoing itself and said so (RESPONSE_ALREADY_SENT): not a mistake.
      if (response.body === null && response.headers.has('x-hono-already-sent')) return false
      warnOnce(request, 'sent', 'c.env.reply.send() or c.env.reply.hijack() was called in the Hono app for %s, so the Response it returned was not sent. ' +
        'Return a Response instead (c.json(), c.text(), new Response()); use c.env.reply only for headers and cookies.')
      response.body?.cancel().catch(() => {})
      return true
    }
    const code = reply.statusCode
    if (code !== 200 && code !== response.status) {
      warnOnce(request, 'code', `c.env.reply.code(${code}) has no effect for %s: the app's Response has status ${response.status}, and that is what is sent. ` +
        `Set the status on the Response: c.json(data, ${code}), c.text(text, ${code}), c.status(${code}) or new Response(body, { status: ${code} }).`)
    }
    return false
  }
}
