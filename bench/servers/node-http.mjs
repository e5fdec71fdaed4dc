// Variant 1: node:http alone, every response written by hand. The limit.
import http from 'node:http'
import {
  BIG_BODY, EIGHT_HEADERS, JSON_OBJECT, MIDDLEWARE_HEADER, PREFIX, RESOURCES, SSE_EVENTS, TEXT, sseEvent
} from '../payloads.mjs'

const TEXT_TYPE = 'text/plain; charset=UTF-8'
const JSON_TYPE = 'application/json'
const resources = new Set(RESOURCES)
const JSON_BODY = JSON.stringify(JSON_OBJECT)
const SSE_HEADERS = {
  'cache-control': 'no-cache', connection: 'keep-alive', 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked'
}

function send (res, status, type, body, extra) {
  res.writeHead(status, { ...extra, 'content-type': type, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

function handle (req, res) {
  const url = req.url
  const path = url.slice(PREFIX.length, url.indexOf('?') === -1 ? url.length : url.indexOf('?'))
  if (!url.startsWith(PREFIX + '/')) return send(res, 404, TEXT_TYPE, '404 Not Found')
  if (req.method === 'POST' && path === '/echo') return echo(req, res)
  if (req.method !== 'GET') return send(res, 404, TEXT_TYPE, '404 Not Found')
  switch (path) {
    case '/text': return send(res, 200, TEXT_TYPE, TEXT)
    case '/json': return send(res, 200, JSON_TYPE, JSON_BODY)
    case '/headers': return send(res, 200, TEXT_TYPE, TEXT, EIGHT_HEADERS)
    case '/big': return send(res, 200, 'application/octet-stream', BIG_BODY)
    case '/sse': return sse(res)
  }
  const parts = path.split('/') // ['', 'api', resource, id]
  if (parts.length === 4 && parts[1] === 'api' && resources.has(parts[2]) && parts[3] !== '') {
    return send(res, 200, JSON_TYPE, JSON.stringify({ resource: parts[2], id: parts[3] }), {
      'access-control-allow-origin': '*', [MIDDLEWARE_HEADER[0]]: MIDDLEWARE_HEADER[1]
    })
  }
  if (parts.length === 4 && parts[1] === 'bare' && resources.has(parts[2]) && parts[3] !== '') {
    return send(res, 200, JSON_TYPE, JSON.stringify({ resource: parts[2], id: parts[3] }))
  }
  send(res, 404, TEXT_TYPE, '404 Not Found')
}

function echo (req, res) {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    let parsed
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString())
    } catch {
      return send(res, 400, TEXT_TYPE, 'Bad Request')
    }
    send(res, 200, JSON_TYPE, JSON.stringify(parsed))
  })
}

function sse (res) {
  res.writeHead(200, SSE_HEADERS)
  for (let i = 0; i < SSE_EVENTS; i++) res.write(sseEvent(i))
  res.end()
}

export async function createServer () {
  return http.createServer(handle)
}
