import { BusClient } from '@mcpgw/bus';
import { exitOnStartupFailure, runService } from '@mcpgw/runtime';
import { Logger } from '@nestjs/common';
import { AppModule } from './app.module';
import { AuditTrail } from './audit/audit-trail.service';
import { auditRefusals } from './audit/refusals-hook';
import { isUpload } from './files/files.service';
import { GATEWAY_ENV, loadEnv, trustedProxies, type GatewayEnv } from './config/gateway.env';
import { mcpBodyLimit } from './mcp/transport/body-limit';
import { McpHttpErrorFilter } from './mcp/transport/mcp-http-error.filter';

runService({
  service: 'gateway',
  module: AppModule,
  loadEnv,
  port: (e: GatewayEnv) => e.GATEWAY_PORT,
  busQueue: 'gateway',
  bodyLimit: (e: GatewayEnv) => e.MCP_MAX_BODY_BYTES,
  trustedProxies: (e: GatewayEnv) => trustedProxies(e.GATEWAY_TRUSTED_PROXIES),
  bodyParser: false,
  httpErrorFilter: new McpHttpErrorFilter(),
  // An upload may take minutes over a slow link; every other request keeps HTTP_REQUEST_TIMEOUT_MS.
  slowBodies: (e: GatewayEnv) => ({ timeoutMs: e.FILES_UPLOAD_TIMEOUT_MS, route: isUpload }),
  configure: (app) => {
    // MCP bodies are parsed by the surfaces themselves, so that malformed JSON gets a
    // JSON-RPC parse error (-32700) rather than the framework's 400 page.
    // A body must fit in one bus message once wrapped: the limit is capped by the server's max_payload.
    const configured = app.get<GatewayEnv>(GATEWAY_ENV).MCP_MAX_BODY_BYTES;
    const maxPayload = app.get(BusClient).maxPayload();
    const bodyLimit = mcpBodyLimit(configured, maxPayload);
    if (bodyLimit < configured)
      new Logger('Gateway').log(`request bodies limited to ${bodyLimit} bytes: NATS max_payload is ${maxPayload}`);
    const fastify = app.getHttpAdapter().getInstance();
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (_req, body, done) => done(null, body));
    // Refused credentials, per source and minute, on the audit trail (audit/README.md).
    auditRefusals(fastify, app.get(AuditTrail));
  },
}).catch(exitOnStartupFailure('gateway'));
