// The ES module entry: the same single instance as the CommonJS one.
import fastifyHono from './index.js'

export default fastifyHono
export { fastifyHono }
export type {
  FastifyHonoBindings, FastifyHonoEnv, FastifyHonoExecutionContext, FastifyHonoHttp1Bindings, FastifyHonoHttp2Bindings, FastifyHonoHttpVersion,
  FastifyHonoUpgradeBindings, FastifyHonoUpgradeEnv, FetchApp, FastifyHonoOptions, HonoMigrationRoute, HonoRouteInfo, MigrationOption, MigrationRouteOption, MirrorOption, OpenAPIDocument, OpenAPITarget
} from './index.js'
