import { exitOnStartupFailure, runService } from '@mcpgw/runtime';
import { AppModule } from './app.module';
import { loadEnv, type GatewayEnv } from './config/gateway.env';
import { McpHttpErrorFilter } from './mcp/transport/mcp-http-error.filter';

runService({
  service: 'gateway',
  module: AppModule,
  loadEnv,
  port: (e: GatewayEnv) => e.GATEWAY_PORT,
  busQueue: 'gateway',
  bodyLimit: (e: GatewayEnv) => e.MCP_MAX_BODY_BYTES,
  bodyParser: false,
  httpErrorFilter: new McpHttpErrorFilter(),
  configure: (app) => {
    // MCP bodies are parsed by the surfaces themselves, so that malformed JSON gets a
    // JSON-RPC parse error (-32700) rather than the framework's 400 page.
    const fastify = app.getHttpAdapter().getInstance();
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  },
}).catch(exitOnStartupFailure('gateway'));
