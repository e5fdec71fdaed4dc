// The ES module entry: the same single instance as the CommonJS one.
import cjs from './index.js'

const fastifyHono = cjs.default
export default fastifyHono
export { fastifyHono }
export type { FastifyHonoBindings, FetchApp, FastifyHonoOptions } from './index.js'
