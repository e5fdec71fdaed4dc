// The lightweight Response's body methods and clone() answer as a native
// Response in the same state: each body method returns a promise (rejected
// where the native one rejects, with the same error), never a synchronous
// throw, including when the body was handed to a copy (Hono's
// `new Response(res.body, res)`) and read or locked there; clone() throws
// synchronously exactly where the native one does. And the classes name
// themselves as the native ones.
import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'

// Captured before any registration installs the lightweight classes.
const NativeResponse = globalThis.Response
const NativeRequest = globalThis.Request
const NativeHeaders = globalThis.Headers

type ResponseClass = typeof globalThis.Response

async function install (t: Tap.Test): Promise<ResponseClass> {
  const server = Fastify()
  await server.register(fastifyHono, { app: new Hono() })
  t.teardown(() => server.close())
  t.not(globalThis.Response, NativeResponse, 'the lightweight Response is installed')
  return globalThis.Response
}

function describe (value: unknown): string {
  if (value instanceof ArrayBuffer) return `ArrayBuffer [${new Uint8Array(value).join(',')}]`
  if (value instanceof Uint8Array) return `${value.constructor.name} [${value.join(',')}]`
  if (value instanceof Blob) return `Blob ${value.size} ${JSON.stringify(value.type)}`
  if (value instanceof FormData) return `FormData ${JSON.stringify([...value])}`
  if (value instanceof NativeResponse) return `Response ${value.status}`
  return JSON.stringify(value) ?? String(value)
}

/** What a call does: throws, or returns a promise that settles one way or the other, or returns a value. */
async function outcome (call: () => unknown): Promise<string> {
  let value: unknown
  try {
    value = call()
  } catch (err) {
    return `throws ${(err as Error).constructor.name}: ${(err as Error).message}`
  }
  if (!(value instanceof Promise)) return `returns ${describe(value)}`
  try {
    return `resolves ${describe(await value)}`
  } catch (err) {
    return `rejects ${(err as Error).constructor.name}: ${(err as Error).message}`
  }
}

const METHODS = ['text', 'json', 'arrayBuffer', 'blob', 'formData', 'bytes', 'clone'] as const
type Method = typeof METHODS[number]

function call (response: Response, method: Method): unknown {
  return (response as unknown as Record<Method, () => unknown>)[method]()
}

const BODIES: Array<[string, () => [BodyInit | null, ResponseInit | undefined]]> = [
  ['a JSON string', () => ['{"a":1}', undefined]],
  ['a form string with a record', () => ['a=1&b=2', { status: 201, headers: { 'content-type': 'application/x-www-form-urlencoded' } }]],
  ['a string with a Headers object', () => ['kept', { headers: new Headers({ 'x-kept': '1' }) }]],
  ['bytes', () => [new Uint8Array([1, 2, 3]), undefined]],
  ['null', () => [null, undefined]]
]

// Each state: what is done to the response `subject` before the method is
// called on `target` (the subject itself or a copy).
const STATES: Array<[string, (R: ResponseClass, subject: Response) => Promise<Response>]> = [
  ['fresh', async (R, subject) => subject],
  ['read by text()', async (R, subject) => { await subject.text(); return subject }],
  ['read by arrayBuffer()', async (R, subject) => { await subject.arrayBuffer(); return subject }],
  ['cloned', async (R, subject) => { subject.clone(); return subject }],
  ['the clone of a read body', async (R, subject) => { const clone = subject.clone(); await subject.text(); return clone }],
  ['locked by a reader of .body', async (R, subject) => { subject.body?.getReader(); return subject }],
  ['read through .body', async (R, subject) => {
    if (subject.body !== null) await subject.body.pipeTo(new WritableStream())
    return subject
  }],
  ['handed to a copy, not read', async (R, subject) => { Reflect.construct(R, [subject.body, subject]); return subject }],
  ['handed to a copy and read there', async (R, subject) => { await new R(subject.body, subject).text(); return subject }],
  ['handed to a copy and locked there', async (R, subject) => { new R(subject.body, subject).body?.getReader(); return subject }],
  ['the copy, after the original was read', async (R, subject) => { const copy = new R(subject.body, subject); await subject.text(); return copy }],
  ['a copy with its own init, after the original was read', async (R, subject) => {
    const copy = new R(subject.body, { status: 202, headers: subject.headers })
    await subject.arrayBuffer()
    return copy
  }],
  ['a copy of a copy, the middle one read', async (R, subject) => {
    const middle = new R(subject.body, subject)
    const last = new R(middle.body, middle)
    await middle.text()
    return last
  }]
]

test('body methods and clone() answer as a native Response in every state: promises, rejections and throws alike', async (t) => {
  const Lightweight = await install(t)
  for (const [bodyName, make] of BODIES) {
    for (const [stateName, prepare] of STATES) {
      for (const method of METHODS) {
        const [lightBody, lightInit] = make()
        const light = await prepare(Lightweight, new Lightweight(lightBody, lightInit))
        const [nativeBody, nativeInit] = make()
        const native = await prepare(NativeResponse, new NativeResponse(nativeBody, nativeInit))
        const expected = await outcome(() => call(native, method))
        t.equal(await outcome(() => call(light, method)), expected, `${bodyName}, ${stateName}: ${method}()`)
      }
    }
  }
})

test('the body methods, called through the lightweight prototype on a native Response or another object, are the native ones', async (t) => {
  const Lightweight = await install(t)
  for (const method of METHODS) {
    const onNative = await outcome(() => (Lightweight.prototype as unknown as Record<Method, () => unknown>)[method].call(new NativeResponse('{"n":1}')))
    t.equal(onNative, await outcome(() => call(new NativeResponse('{"n":1}'), method)), `${method}() on a native Response`)
    const onOther = await outcome(() => (Lightweight.prototype as unknown as Record<Method, () => unknown>)[method].call({}))
    t.equal(onOther, await outcome(() => (NativeResponse.prototype as unknown as Record<Method, () => unknown>)[method].call({})), `${method}() on a plain object`)
  }
})

test('the lightweight classes name themselves as the native ones', async (t) => {
  await install(t)
  for (const [installed, native, make] of [
    [globalThis.Response, NativeResponse, () => new Response('x')],
    [globalThis.Request, NativeRequest, () => new Request('http://x.test/')],
    [globalThis.Headers, NativeHeaders, () => new Headers()]
  ] as Array<[{ name: string, length: number }, { name: string, length: number }, () => object]>) {
    t.not(installed, native, `${native.name} is replaced`)
    t.equal(installed.name, native.name, `${native.name}.name`)
    t.equal(installed.length, native.length, `${native.name}.length`)
    t.same(Object.getOwnPropertyDescriptor(installed, 'name'), Object.getOwnPropertyDescriptor(native, 'name'), `${native.name}.name's descriptor`)
    t.equal(make().constructor.name, native.name, `new ${native.name}().constructor.name`)
    t.equal(Object.prototype.toString.call(make()), `[object ${native.name}]`)
  }
  t.equal(Response.json({ a: 1 }).constructor.name, 'Response', 'a wrapped native response too')
})

test('over a socket: what a Hono handler sees of Response, its name and its body methods after Hono-style copies', async (t) => {
  // The same sequences, run by a handler with the lightweight classes installed and here on the native class.
  async function sequences (R: ResponseClass): Promise<string[]> {
    const seen: string[] = [R.name, new R('x').constructor.name]
    const original = new R('payload', { headers: { 'content-type': 'text/plain' } })
    const copy = new R(original.body, original)
    seen.push(await outcome(() => copy.text()))
    for (const method of METHODS) seen.push(await outcome(() => call(original, method)))
    const locked = new R('locked')
    new R(locked.body, locked).body?.getReader()
    for (const method of METHODS) seen.push(await outcome(() => call(locked, method)))
    return seen
  }
  const app = new Hono()
  app.get('/observe', async (c) => c.json(await sequences(Response)))
  const server = Fastify()
  await server.register(fastifyHono, { app })
  t.teardown(() => server.close())
  await server.listen({ port: 0, host: '127.0.0.1' })
  const address = server.server.address() as { port: number }
  const res = await fetch(`http://127.0.0.1:${address.port}/observe`)
  t.equal(res.status, 200)
  t.same(await res.json(), await sequences(NativeResponse), 'the handler saw what the native class shows')
})
