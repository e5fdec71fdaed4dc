import { IncomingMessage, type ServerResponse } from 'node:http'
import type { Duplex, Readable } from 'node:stream'

// How Node's HTTP/1 server treats a request body (lib/_http_incoming.js,
// lib/_http_server.js, lib/internal/streams/readable.js), checked on Node
// 20.20, 22.23, 24.22 and 26.12. Only public fields are read; what is relied
// on is behaviour the documentation does not spell out. Each function says
// what happens if that behaviour changes.

/**
 * The unread rest of a request body whose every byte had arrived before the
 * client went away. `complete` is set once Node's parser has received the
 * whole message; when the connection then closes, Node destroys the request
 * with an ECONNRESET error (`abortIncoming`), but the bytes it had buffered
 * stay in the stream, and read() still returns them on a destroyed stream.
 * Only for the request itself (not a stream a preParsing hook put in its
 * place), and undefined when the body is not known to be whole. If a Node
 * version cleared the buffer on destroy, read() would return null and the
 * caller's length check (or an empty rest where bytes are missing) fails the
 * read as an aborted upload.
 */
export function bufferedRest (source: Readable, incoming: object): Buffer[] | undefined {
  if (source !== incoming || !(source instanceof IncomingMessage) || !source.complete) return undefined
  source.pause() // a paused stream's read() returns all it holds, not one chunk
  const rest: Buffer[] = []
  for (let chunk = source.read() as Buffer | null; chunk !== null; chunk = source.read() as Buffer | null) rest.push(chunk)
  return rest
}

/**
 * Ends a connection whose request body will not be read to its end: after
 * what was written has gone out (the response is finished by then), so the
 * client gets the whole response and then the close. destroySoon() is
 * documented on net.Socket; without it, destroy().
 */
export function closeConnection (incoming: IncomingMessage): void {
  const socket = incoming.socket as IncomingMessage['socket'] | null
  if (socket !== null) endSocketSoon(socket, 'destroy')
}

/**
 * Ends a socket once what was written to it has gone out: destroySoon(),
 * documented on net.Socket; a stream without it is ended (`orElse: 'end'`)
 * or destroyed at once.
 */
export function endSocketSoon (socket: Duplex, orElse: 'end' | 'destroy' = 'end'): void {
  if (socket.destroyed) return
  const destroySoon = (socket as Duplex & { destroySoon?: () => void }).destroySoon
  if (typeof destroySoon === 'function') destroySoon.call(socket)
  else if (orElse === 'end') socket.end()
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
export function beforeUnreadBodyIsDumped (outgoing: ServerResponse, listener: () => void): void {
  outgoing.prependOnceListener('finish', listener)
}
