import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { BusClient } from '@mcpgw/bus';
import { InjectKysely } from '@mcpgw/persistence';
import { Draining, TextParamsPipe, installRequestIds, requestIdOf } from '@mcpgw/runtime';
import type { AddressInfo } from 'node:net';
import { adminPort } from '../config/admin-api.env';
import { AuditTrail } from '../audit/audit-trail.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import type { GatewayDb } from '../database/schema';
import { AdminApiErrorFilter } from './admin-api-errors';
import type { AdminRequest } from './admin-token.guard';
import { AdminHttpModule } from './admin-http.module';
import { installConsole } from './console-static';
import { ActivityFeed } from './live/activity-feed.service';
import type { AdminLive } from './live/admin-live.module';
import { PlaygroundService } from './live/playground.service';
import { LiveStreams } from './live/sse-stream';

/** Admin requests carry small JSON bodies. */
const ADMIN_BODY_LIMIT = 64 * 1024;

/**
 * Serves the management API on ADMIN_HOST:ADMIN_PORT when ADMIN_PORT is set:
 * a Nest application of its own (AdminHttpModule) beside the gateway's public
 * one, in the same process, on the gateway's database pool. It stops taking
 * requests at the first step of the drain, with the public port.
 */
@Injectable()
export class AdminApiServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('AdminApi');
  private app?: NestFastifyApplication;
  private readonly live: AdminLive;

  constructor(
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    @InjectKysely() private readonly db: GatewayDb,
    private readonly bus: BusClient,
    draining: Draining,
    playground: PlaygroundService,
    activity: ActivityFeed,
    private readonly trail: AuditTrail,
  ) {
    this.live = { playground, activity };
    draining.register({ name: 'admin-api', stopIntake: () => this.close() });
  }

  async onApplicationBootstrap(): Promise<void> {
    const port = adminPort(this.env);
    if (port === undefined) return;
    for (const [name, taken] of [
      ['GATEWAY_PORT', this.env.GATEWAY_PORT],
      ['MANAGEMENT_PORT', this.env.MANAGEMENT_PORT],
    ] as const) {
      if (port !== 0 && port === taken) {
        throw new Error(`ADMIN_PORT ${port} is the ${name}: the management API needs a port of its own`);
      }
    }
    const app = await createAdminApp(this.db, this.env, this.bus, this.live, this.trail);
    await app.listen(port, this.env.ADMIN_HOST);
    this.app = app;
    this.logger.log({ msg: 'management API listening', host: this.env.ADMIN_HOST, port: this.address!.port });
  }

  /** Where it listens (undefined: off or closed). */
  get address(): AddressInfo | undefined {
    return this.app?.getHttpServer().address() as AddressInfo | undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  private async close(): Promise<void> {
    const app = this.app;
    this.app = undefined;
    // Its event streams never end by themselves: end them (EventSource reconnects elsewhere), then close.
    app?.get(LiveStreams).endAll();
    await app?.close();
  }
}

/** The management API's application, initialised, not yet listening. */
export async function createAdminApp(
  db: GatewayDb,
  env: GatewayEnv,
  bus: BusClient,
  live?: AdminLive,
  trail?: AuditTrail,
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AdminHttpModule.forRoot({ db, env, bus, live, trail }),
    new FastifyAdapter({
      bodyLimit: ADMIN_BODY_LIMIT,
      // Long ids reach TextParamsPipe, which refuses them in the API's own form (Fastify would answer 414 itself).
      maxParamLength: 1024,
      genReqId: requestIdOf,
      requestIdHeader: false,
      requestTimeout: env.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeout: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      http: { requestTimeout: env.HTTP_REQUEST_TIMEOUT_MS, headersTimeout: env.HTTP_HEADERS_TIMEOUT_MS },
    }),
    // No `logger`: Nest would make it every app's (a static); the gateway's JSON logger goes on serving both.
    // No Nest body parsers: Fastify's JSON parser (prototype poisoning refused) is the only one kept.
    { abortOnError: false, bodyParser: false },
  );
  app.useGlobalFilters(new AdminApiErrorFilter());
  app.useGlobalPipes(new TextParamsPipe());
  const fastify = app.getHttpAdapter().getInstance();
  // JSON or nothing: any other body is 415 (unsupported_media_type), not a string handed to a handler.
  fastify.removeContentTypeParser('text/plain');
  installRequestIds(fastify, () => false);
  const audit = new Logger('AdminAudit');
  fastify.addHook('onRequest', (_request, reply, done) => {
    // Answers may hold a secret shown once (a new API key): no cache keeps them.
    reply.raw.setHeader('cache-control', 'no-store');
    done();
  });
  fastify.addHook('onResponse', (request: AdminRequest, reply, done) => {
    // Who did what: the token's id, never the token.
    audit.log({
      msg: 'admin request',
      request_id: request.id,
      token_id: request.adminTokenId ?? null,
      method: request.method,
      route: request.routeOptions.url ?? null,
      path: request.url.split('?', 1)[0],
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    });
    if (trail) auditRequest(trail, request, reply.statusCode);
    done();
  });
  // The browser console's static pages, under /console/ (apps/console, built by npm run build).
  installConsole(fastify);
  await app.init();
  return app;
}

/**
 * The audit trail's view of an admin request (../audit/README.md): every change
 * (not GET, HEAD or OPTIONS), who made it (the token's id) and how it ended;
 * and every refused credential, counted per source and minute.
 */
function auditRequest(trail: AuditTrail, request: AdminRequest, status: number): void {
  if (status === 401 || status === 403) trail.refused({ source: request.ip, surface: 'admin-api', status });
  if (['GET', 'HEAD', 'OPTIONS'].includes(request.method)) return;
  const params = (request.params ?? {}) as Record<string, unknown>;
  trail.adminAction({
    surface: 'admin-api',
    principal: request.adminTokenId ? `admin:${request.adminTokenId}` : 'anonymous',
    action: `${request.method} ${request.routeOptions.url ?? '(no route)'}`,
    ...(Object.keys(params).length && { target: params }),
    ...(typeof params.agentId === 'string' && { agentId: params.agentId }),
    outcome: status < 400 ? 'ok' : 'refused',
    status,
  });
}
