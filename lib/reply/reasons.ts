/**
 * Why a response was written through `reply.send` rather than by the fast
 * writer or the stream writer: each guard of the way out names itself.
 * With onSend hooks, the plugin runs them and the reason says why the
 * response was prepared as reply.send prepares it (see on-send.ts).
 */
export type SendReason =
  /** The route's onSend hooks cannot be read: only reply.send can run them. */
  | 'onSend hooks in scope'
  /** A live stream with onSend hooks: it reaches them as reply.send would give it. */
  | 'onSend hooks on a stream'
  | 'HTTP/2'
  | 'headers already sent'
  | 'no chunked framing (HTTP/1.0)'
  | 'custom statusText'
  | 'HEAD answered with a stream'
  | 'no body to stream'
  | 'framing header set on the raw response'
  | 'content-length set by the app'
  | 'transfer-encoding set by the app'
  | 'trailer set by the app'
  | 'header value that is not a string'
  | 'non-ASCII content-disposition'
