// Reference variant, production stack: fastify-stack with fastify-hono's
// lightweight Request, Response and Headers installed as globals, and no
// Hono. A control for the floor (fastify-hono-floor-stack.mjs), which
// installs them too: what installing them does to the Fastify route's own
// cost, so that what the floor adds beyond it is Hono's.
import { createRequire } from 'node:module'
import { createServer as createStackServer } from './fastify-stack.mjs'

// dist/ is CommonJS; the globals module has no side effects until called.
createRequire(import.meta.url)('../../dist/web/globals.js').installLightweightGlobals()

export const createServer = createStackServer
