/**
 * Why a response was written through `reply.send` rather than by the fast
 * writer or the stream writer: each guard of the way out names itself.
 */
export type SendReason =
  | 'onSend hooks in scope'
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
