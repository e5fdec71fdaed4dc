// The merge of the app's headers over the reply's (reply/head.ts) and how it
// is taken back: into a header record, change by change or whole (where
// onSend hooks run between the merge and the write), and through the
// reply's methods for reply.send, seen on the wire. The socket tests
// (on-send-hooks, stream-lifecycle, own-writer) show each way's 500.
import { test } from 'tap'
import Fastify from 'fastify'
// Internals, as built: `npm test` builds first.
import { mergeHeaders, mergeThroughReply } from '../dist/reply/head.js'
import { listen, rawRequest } from './helpers/net'

const appList = ['vary', 'accept', 'set-cookie', 'b=2', 'x-app', '1', 'cache-control', 'no-store']

function fastifyRecord (): Record<string, string | string[]> {
  return { 'x-from-hook': 'kept', vary: 'Origin', 'set-cookie': ['a=1'], 'cache-control': 'max-age=60' }
}

test('into a record: the app wins, Set-Cookie and Vary combine, the default type and length are added; undo puts back each change', async (t) => {
  const record = fastifyRecord()
  const cookies = record['set-cookie']
  const merge = mergeHeaders(record, appList, 'text/plain; charset=UTF-8', 5)
  t.same(record, {
    'x-from-hook': 'kept',
    vary: 'Origin, accept',
    'set-cookie': ['a=1', 'b=2'],
    'cache-control': 'no-store',
    'x-app': '1',
    'content-type': 'text/plain; charset=UTF-8',
    'content-length': '5'
  })
  t.same(cookies, ['a=1'], 'the array the record held is not changed in place')
  // A later change to a name the merge did not touch stays.
  record['x-later'] = 'stays'
  merge.undo()
  t.same(record, { ...fastifyRecord(), 'x-later': 'stays' })
})

test('into a record, whole: what the hooks set, changed or removed after the merge goes back too', async (t) => {
  const record = fastifyRecord()
  const merge = mergeHeaders(record, appList, undefined, undefined, true)
  // As onSend hooks do: a new header, one changed, one removed, a cookie
  // pushed into the array the record holds (Fastify's reply.header does).
  ;(record['set-cookie'] as string[]).push('c=3')
  record.etag = '"abc"'
  record['content-encoding'] = 'gzip'
  record['x-from-hook'] = 'changed by a hook'
  delete record.vary
  merge.undo()
  t.same(record, fastifyRecord())
  merge.undo()
  t.same(record, fastifyRecord(), 'a second undo changes nothing')
})

test('through the reply for reply.send: merged as on the record (raw headers too), undone change by change or whole, on the wire', async (t) => {
  const server = Fastify()
  server.addHook('onRequest', async (request, reply) => {
    reply.header('x-from-hook', 'kept').header('vary', 'Origin').header('set-cookie', ['a=1'])
    reply.raw.setHeader('x-raw', 'raw')
  })
  server.get('/:how', (request, reply) => {
    const { how } = request.params as { how: string }
    const merge = mergeThroughReply(reply, [...appList, 'x-raw', 'from the app'], 'text/plain; charset=UTF-8', undefined, how === 'whole')
    const merged = reply.getHeaders()
    if (how === 'whole') reply.header('etag', '"abc"').header('x-from-hook', 'changed by a hook')
    if (how !== 'kept') merge.undo()
    reply.header('x-merged', JSON.stringify(merged))
    reply.send('ok')
  })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  const kept = await rawRequest(port, 'GET', '/kept')
  t.same(JSON.parse(kept.headers['x-merged'][0]), {
    'x-raw': 'from the app',
    'x-from-hook': 'kept',
    vary: 'Origin, accept',
    'set-cookie': ['a=1', 'b=2'],
    'x-app': '1',
    'cache-control': 'no-store',
    'content-type': 'text/plain; charset=UTF-8'
  })
  t.same(kept.headers['set-cookie'], ['a=1', 'b=2'])
  t.same(kept.headers['x-app'], ['1'])

  for (const how of ['changes', 'whole']) {
    const res = await rawRequest(port, 'GET', `/${how}`)
    t.equal(res.status, 200, how)
    t.same(res.headers['x-from-hook'], ['kept'], `${how}: what the onRequest hook set`)
    t.same(res.headers.vary, ['Origin'], `${how}: Vary as the hook set it`)
    t.same(res.headers['set-cookie'], ['a=1'], `${how}: the hook's cookie only`)
    t.same(res.headers['x-raw'], ['raw'], `${how}: the raw response's header`)
    for (const name of ['x-app', 'cache-control', 'etag']) t.equal(res.headers[name], undefined, `${how}: no ${name}`)
    // Fastify's own default type for the string reply.send gives, not the merge's.
    t.same(res.headers['content-type'], ['text/plain; charset=utf-8'], `${how}: reply.send's type`)
  }
})
