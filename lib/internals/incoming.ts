import type { IncomingMessage, ServerResponse } from 'node:http'

// How Node's HTTP/1 server treats a request body (lib/_http_incoming.js,
// lib/_http_server.js, lib/internal/streams/readable.js), checked on Node
// 20.20, 22.23, 24.22 and 26.12. Only public fields are read; what is relied
// on is behaviour the documentation does not spell out. Each function says
// what happens if that behaviour changes.

/**
 * Ends a connection whose request body will not be read to its end: after
 * what was written has gone out (the response is finished by then), so the
 * client gets the whole response and then the close. destroySoon() is
 * documented on net.Socket; without it, destroy().
 */
export function closeConnection (incoming: IncomingMessage): void {
  const socket = incoming.socket as (IncomingMessage['socket'] & { destroySoon?: () => void }) | null
  if (socket === null || socket.destroyed) return
  if (typeof socket.destroySoon === 'function') socket.destroySoon()
  else socket.destroy()
}

/**
 * Calls `listener` when the response has finished, before Node's own
 * 'finish' listener. That one (lib/_http_server.js, resOnFinish) dumps a
 * body nobody has started to read: it removes every 'data' listener and
 * marks the request so that its parser drops the rest of the body without
 * pushing it to the stream, reading it without bound and without a 'data'
 * event to count it by. It leaves alone a body that was resumed (its
 * comment: "If the user never called req.read(), and didn't pipe() or
 * .resume() or .on('data')"), so a listener that resumes the body first
 * keeps it an ordinary stream. If Node ever dumped such a body anyway, a
 * drain's 'data' listener would see nothing and its byte bound could not
 * count, but its time bound would still close the connection.
 */
export function whenResponseFinished (outgoing: ServerResponse, listener: () => void): void {
  outgoing.prependOnceListener('finish', listener)
}
