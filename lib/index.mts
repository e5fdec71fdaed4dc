// The ES module entry: the same single instance as the CommonJS one.
import fastifyHono from './index.js'

export default fastifyHono
export { fastifyHono }
export type { FastifyHonoBindings, FetchApp, FastifyHonoOptions, OpenAPIDocument, OpenAPITarget } from './index.js'
