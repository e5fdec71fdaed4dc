// WebSocket reference variant: `ws` alone on node:http, the upgrade handled
// by hand and each message sent back as the Buffer `ws` gave it. No Fastify,
// no Hono: the floor under every other variant.
import http from 'node:http'
import { WebSocketServer } from 'ws'
import { WS_PATH, wsStats } from '../ws-app.mjs'

export async function createServer () {
  const server = http.createServer((request, response) => {
    response.writeHead(404).end()
  })
  const wss = new WebSocketServer({ noServer: true })
  server.on('upgrade', (request, socket, head) => {
    if (request.url !== WS_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')
      return
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      wsStats.opened++
      ws.on('message', (data, isBinary) => {
        wsStats.messages++
        ws.send(data, { binary: isBinary })
      })
    })
  })
  return server
}
