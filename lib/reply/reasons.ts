/**
 * Why the plan (plan.ts) sent a response through `reply.send` rather than
 * one of the plugin's writers: each guard names itself, in the debug log.
 * With readable onSend hooks, the plugin still runs them, and the reason
 * says why the response was prepared as reply.send prepares it.
 */
export type SendReason =
  /** The route's onSend hooks (or the reply's header record they need) cannot be read: only reply.send can run them. */
  | 'onSend hooks unreadable'
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
  /** With onSend hooks: a header value that Headers accepts and Node rejects; reply.send's check answers 500. */
  | 'header Node rejects'
