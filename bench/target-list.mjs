// The project's CPU targets, shared by targets.mjs (CPU time per request,
// paired alternation) and instructions.mjs (instructions per request).

/**
 * Each target: the ratio of two cells' CPU per request (`over` ÷ `under`,
 * both [variant, case]) and the bound it must meet, by group: `route` (the
 * cost of a mounted c.text() or c.json() route against a plain Fastify route
 * and against reply.hijack() plus @hono/node-server's listener) and
 * `middleware` (cors() plus c.header() after next() against the same route
 * without middleware, and mixed traffic against @hono/node-server
 * standalone, whose bound is the +65% a draft upstream change to
 * @hono/node-server reported for itself), `stack` (the production stack),
 * `echo` (against @hono/node-server), `floor` (a stack ratio split into
 * Hono's share and the plugin's) and `split` (an app's parameter routes as
 * several small mounts) and `migration` (mirrored and shifted routes beside
 * those that use neither). Rows without a bound are references,
 * printed for comparison.
 */
export const TARGETS = [
  { id: 'text-vs-fastify', group: 'route', label: 'c.text(): fastify-hono ÷ Fastify route', over: ['fastify-hono', 'text'], under: ['fastify', 'text'], max: 1.05 },
  { id: 'text-vs-hijack', group: 'route', label: 'c.text(): fastify-hono ÷ hijack + getRequestListener', over: ['fastify-hono', 'text'], under: ['hijack', 'text'], max: 1.00 },
  { id: 'json-vs-fastify', group: 'route', label: 'c.json(): fastify-hono ÷ Fastify route', over: ['fastify-hono', 'json'], under: ['fastify', 'json'], max: 1.05 },
  { id: 'json-vs-hijack', group: 'route', label: 'c.json(): fastify-hono ÷ hijack + getRequestListener', over: ['fastify-hono', 'json'], under: ['hijack', 'json'], max: 1.00 },
  // No bound: the same two ratios with the plugin around a bare fetch() that
  // builds the same Responses with no Hono in between: the plugin's own share.
  { id: 'text-bare', group: 'route', label: 'reference: c.text()\'s Response from a bare fetch (no Hono) ÷ Fastify route', over: ['fastify-hono-bare', 'text'], under: ['fastify', 'text'] },
  { id: 'json-bare', group: 'route', label: 'reference: c.json()\'s Response from a bare fetch (no Hono) ÷ Fastify route', over: ['fastify-hono-bare', 'json'], under: ['fastify', 'json'] },
  { id: 'middleware', group: 'middleware', label: 'cors() + c.header(): middleware route ÷ param route', over: ['fastify-hono', 'middleware'], under: ['fastify-hono', 'param'], max: 1.10 },
  { id: 'mixed', group: 'middleware', label: 'mixed traffic: @hono/node-server ÷ fastify-hono', over: ['node-server', 'mixed'], under: ['fastify-hono', 'mixed'], min: 1.65 },
  // No bound: the same middleware ratio where this plugin does not run, to
  // show how much of it is Hono's own (cors(), compose, the app's middleware).
  { id: 'middleware-node-server', group: 'middleware', label: 'reference: the same ratio on @hono/node-server', over: ['node-server', 'middleware'], under: ['node-server', 'param'] },
  { id: 'middleware-hijack', group: 'middleware', label: 'reference: the same ratio on hijack + getRequestListener', over: ['hijack', 'middleware'], under: ['hijack', 'param'] },
  { id: 'middleware-fastify', group: 'middleware', label: 'reference: plain Fastify, an onRequest and an onSend hook ÷ none', over: ['fastify', 'middleware'], under: ['fastify', 'param'] },
  // The production stack (stack.mjs): the mounted app against the same
  // routes in Fastify under cookie, compress, helmet, cors and rate-limit.
  { id: 'stack-text', group: 'stack', label: 'c.text() under the stack: fastify-hono ÷ Fastify route', over: ['fastify-hono-stack', 'text'], under: ['fastify-stack', 'text'], max: 1.05 },
  { id: 'stack-json', group: 'stack', label: 'c.json() under the stack: fastify-hono ÷ Fastify route', over: ['fastify-hono-stack', 'json'], under: ['fastify-stack', 'json'], max: 1.05 },
  { id: 'stack-param', group: 'stack', label: 'param route under the stack: fastify-hono ÷ Fastify route', over: ['fastify-hono-stack', 'param'], under: ['fastify-stack', 'param'], max: 1.05 },
  { id: 'stack-mixed', group: 'stack', label: 'mixed traffic under the stack: fastify-hono ÷ Fastify route', over: ['fastify-hono-stack', 'mixed'], under: ['fastify-stack', 'mixed'], max: 1.05 },
  { id: 'stack-echo', group: 'stack', label: 'POST JSON echo under the stack: fastify-hono ÷ Fastify route', over: ['fastify-hono-stack', 'echo'], under: ['fastify-stack', 'echo'], max: 1.05 },
  // No bound: the stack without its two onSend hooks
  // (helmet, cors and rate-limit only: the headers Fastify hooks set, on the
  // fast writer); @hono/node-server with Hono's nearest middleware.
  { id: 'headers-text', group: 'stack', label: 'reference: c.text() under helmet + cors + rate-limit only, fastify-hono ÷ Fastify route', over: ['fastify-hono-headers', 'text'], under: ['fastify-headers', 'text'] },
  { id: 'headers-json', group: 'stack', label: 'reference: c.json() under helmet + cors + rate-limit only, fastify-hono ÷ Fastify route', over: ['fastify-hono-headers', 'json'], under: ['fastify-headers', 'json'] },
  { id: 'stack-node-server-text', group: 'stack', label: 'reference: c.text(), @hono/node-server + Hono middleware ÷ Fastify route under the stack', over: ['node-server-stack', 'text'], under: ['fastify-stack', 'text'] },
  { id: 'stack-node-server-json', group: 'stack', label: 'reference: c.json(), @hono/node-server + Hono middleware ÷ Fastify route under the stack', over: ['node-server-stack', 'json'], under: ['fastify-stack', 'json'] },
  // The floor (servers/fastify-hono-floor-stack.mjs): the Fastify route that
  // also runs the Hono app, with no bridge. Floor ÷ Fastify route is Hono's
  // share of a stack ratio, fastify-hono ÷ floor the plugin's.
  { id: 'floor-text', group: 'floor', label: 'reference: c.text() under the stack, the floor (Fastify route + Hono app.fetch) ÷ Fastify route', over: ['fastify-hono-floor-stack', 'text'], under: ['fastify-stack', 'text'] },
  { id: 'above-floor-text', group: 'floor', label: 'reference: c.text() under the stack, fastify-hono ÷ the floor', over: ['fastify-hono-stack', 'text'], under: ['fastify-hono-floor-stack', 'text'] },
  { id: 'floor-json', group: 'floor', label: 'reference: c.json() under the stack, the floor (Fastify route + Hono app.fetch) ÷ Fastify route', over: ['fastify-hono-floor-stack', 'json'], under: ['fastify-stack', 'json'] },
  { id: 'above-floor-json', group: 'floor', label: 'reference: c.json() under the stack, fastify-hono ÷ the floor', over: ['fastify-hono-stack', 'json'], under: ['fastify-hono-floor-stack', 'json'] },
  { id: 'floor-param', group: 'floor', label: 'reference: param route under the stack, the floor (Fastify route + Hono app.fetch) ÷ Fastify route', over: ['fastify-hono-floor-stack', 'param'], under: ['fastify-stack', 'param'] },
  { id: 'above-floor-param', group: 'floor', label: 'reference: param route under the stack, fastify-hono ÷ the floor', over: ['fastify-hono-stack', 'param'], under: ['fastify-hono-floor-stack', 'param'] },
  { id: 'floor-mixed', group: 'floor', label: 'reference: mixed traffic under the stack, the floor (Fastify route + Hono app.fetch) ÷ Fastify route', over: ['fastify-hono-floor-stack', 'mixed'], under: ['fastify-stack', 'mixed'] },
  { id: 'above-floor-mixed', group: 'floor', label: 'reference: mixed traffic under the stack, fastify-hono ÷ the floor', over: ['fastify-hono-stack', 'mixed'], under: ['fastify-hono-floor-stack', 'mixed'] },
  { id: 'globals-text', group: 'floor', label: 'reference: c.text() under the stack, Fastify route with fastify-hono\'s classes as globals ÷ without', over: ['fastify-stack-globals', 'text'], under: ['fastify-stack', 'text'] },
  { id: 'globals-json', group: 'floor', label: 'reference: c.json() under the stack, Fastify route with fastify-hono\'s classes as globals ÷ without', over: ['fastify-stack-globals', 'json'], under: ['fastify-stack', 'json'] },
  // No bound: the same parameter routes as one small mount per resource
  // (servers/fastify-hono-stack-split.mjs) ÷ one mount of the whole app.
  { id: 'split-param', group: 'split', label: 'reference: param route under the stack, one mount per resource ÷ one mount of the whole app', over: ['fastify-hono-stack-split', 'param'], under: ['fastify-hono-stack', 'param'] },
  // The one case where a peer was ahead: the POST JSON echo.
  { id: 'echo-vs-node-server', group: 'echo', label: 'POST JSON echo: fastify-hono ÷ @hono/node-server', over: ['fastify-hono', 'echo'], under: ['node-server', 'echo'], max: 1.00 },
  // No bound: what a Fastify route itself costs on the echo against
  // @hono/node-server running the Hono app, and the mount against it.
  { id: 'echo-fastify-vs-node-server', group: 'echo', label: 'reference: POST JSON echo, Fastify route ÷ @hono/node-server', over: ['fastify', 'echo'], under: ['node-server', 'echo'] },
  { id: 'echo-vs-fastify', group: 'echo', label: 'reference: POST JSON echo, fastify-hono ÷ Fastify route', over: ['fastify-hono', 'echo'], under: ['fastify', 'echo'] },
  // Moving routes (the migration option): Fastify routes with Hono twins
  // (servers/fastify-twin*.mjs). A mirrored route's CPU per request includes
  // its mirrored run, in the same process; a share elsewhere on the server
  // costs the router one derived constraint per request, and a 0% share
  // on the route itself one store lookup.
  { id: 'mirror-json', group: 'migration', label: 'reference: c.json()\'s Fastify twin mirrored on every request ÷ not mirrored', over: ['fastify-twin-mirror', 'json'], under: ['fastify-twin', 'json'] },
  { id: 'mirror-other-route', group: 'migration', label: 'GET text beside a mirrored route ÷ no migration option', over: ['fastify-twin-mirror', 'text'], under: ['fastify-twin', 'text'], max: 1.02 },
  { id: 'share-other-route', group: 'migration', label: 'GET json on a server with a share elsewhere ÷ no migration option', over: ['fastify-twin-share', 'json'], under: ['fastify-twin', 'json'], max: 1.02 },
  { id: 'share-zero', group: 'migration', label: 'reference: GET text with a 0% share ÷ no migration option', over: ['fastify-twin-share', 'text'], under: ['fastify-twin', 'text'] }
]

export const GROUPS = [...new Set(TARGETS.map((t) => t.group))]
