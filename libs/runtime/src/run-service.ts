import 'reflect-metadata';
import type { ExceptionFilter, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestMicroservice } from '@nestjs/microservices';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { BUS_OPTIONS, BusExceptionFilter, BusServer, NATS_CONNECTION, type BusOptions } from '@mcpgw/bus';
import { EnvValidationError } from '@mcpgw/config';
import {
  JsonLogger,
  METRICS_REGISTRY,
  READINESS_CHECKS,
  startManagementServer,
  type ReadinessCheck,
} from '@mcpgw/observability';
import { startTracing } from '@mcpgw/observability';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { installCheapAsyncResourceBind } from './async-resource-bind';
import { installRequestIds, requestIdOf } from './request-ids';
import { ServiceErrorHttpFilter } from './service-error-http.filter';
import { holdBodiesTo, type SlowBodies } from './body-deadlines';
import { DEFAULT_SHUTDOWN_GRACE_MS, drainOnSignals } from './shutdown';

/** What every service's environment has; each app's env adds its own settings. */
export interface BaseEnv {
  LOG_LEVEL: string;
  SERVICE_INSTANCE: string;
  MANAGEMENT_PORT: number;
  MANAGEMENT_HOST: string;
  /** Apps that serve HTTP add libs/config `HttpEnv`. */
  HTTP_REQUEST_TIMEOUT_MS?: number;
  HTTP_HEADERS_TIMEOUT_MS?: number;
  HTTP_KEEP_ALIVE_TIMEOUT_MS?: number;
  /** libs/config `ShutdownEnv`. */
  SHUTDOWN_GRACE_MS?: number;
}

export interface ServiceSpec<Env extends BaseEnv = BaseEnv> {
  /** Shown in every log line. */
  service: string;
  module: Type<unknown>;
  /** Validates the environment before anything starts; throws EnvValidationError. */
  loadEnv: () => Env;
  /** The app's own HTTP port; omit when it serves only the management port (the agent pod). */
  port?: (env: Env) => number;
  /** Interface to listen on; default all (0.0.0.0). Internal services listen on loopback. */
  host?: (env: Env) => string;
  /** Bus queue group for the app's request handlers; omit when the app has none. */
  busQueue?: string;
  /** Body size limit for HTTP requests, in bytes. */
  bodyLimit?: (env: Env) => number;
  /**
   * The reverse proxies (addresses or CIDRs) whose `X-Forwarded-For` names the
   * client (Fastify `request.ip`); none: `request.ip` is the TCP peer.
   */
  trustedProxies?: (env: Env) => string[];
  /** How HTTP errors outside handlers are answered; default: the REST form of ServiceError. */
  httpErrorFilter?: ExceptionFilter;
  /** False when the app parses request bodies itself (configure then adds its parsers). */
  bodyParser?: boolean;
  /**
   * Routes whose request bodies may take longer than HTTP_REQUEST_TIMEOUT_MS to
   * arrive (uploads), and their limit; every other request keeps HTTP_REQUEST_TIMEOUT_MS.
   */
  slowBodies?: (env: Env) => SlowBodies;
  /** Adjust the Fastify instance (content-type parsers, hooks) before listening. */
  configure?: (app: NestFastifyApplication) => void | Promise<void>;
}

/**
 * Start one of our services the same way every time: validated env, JSON logs
 * (pino, with request and trace ids),
 * Fastify, the bus transport, graceful shutdown on SIGTERM/SIGINT.
 */
export async function runService<Env extends BaseEnv>(spec: ServiceSpec<Env>): Promise<NestFastifyApplication> {
  let env: Env;
  try {
    env = spec.loadEnv();
  } catch (error) {
    if (error instanceof EnvValidationError) {
      process.stderr.write(`${spec.service}: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  startTracing(spec.service, env);
  // Fastify binds a callback per request body; Node 20's bind costs 10 µs (async-resource-bind.ts).
  installCheapAsyncResourceBind();
  const logger = new JsonLogger(spec.service, env.LOG_LEVEL, { instance: env.SERVICE_INSTANCE });
  const requestTimeoutMs = env.HTTP_REQUEST_TIMEOUT_MS ?? 30_000;
  const slowBodies = spec.slowBodies?.(env);
  // Node's limit is per server: with slow routes it is theirs, and the rest are held to theirs by holdBodiesTo.
  const serverTimeoutMs = Math.max(requestTimeoutMs, slowBodies?.timeoutMs ?? 0);
  const app = await NestFactory.create<NestFastifyApplication>(
    spec.module,
    new FastifyAdapter({
      bodyLimit: spec.bodyLimit?.(env) ?? 1_048_576,
      ...(spec.trustedProxies?.(env).length && { trustProxy: spec.trustedProxies(env) }),
      return503OnClosing: true,
      // `request.id`: the caller's X-Request-Id when safe, else a UUID (request-ids.ts).
      genReqId: requestIdOf,
      requestIdHeader: false,
      // Slow or idle clients cannot hold a connection (see libs/config HttpEnv). Node reads the
      // request and header limits when the server is made (Fastify's own option alone is not
      // enforced), and checks them every 30 s unless told otherwise.
      requestTimeout: serverTimeoutMs,
      keepAliveTimeout: env.HTTP_KEEP_ALIVE_TIMEOUT_MS ?? 65_000,
      http: {
        requestTimeout: serverTimeoutMs,
        headersTimeout: Math.min(env.HTTP_HEADERS_TIMEOUT_MS ?? 10_000, requestTimeoutMs),
        connectionsCheckingInterval: 1_000,
      },
    }),
    // Not buffered: an app that hangs in start-up (waiting for NATS, the database, the inbox
    // stream) says what it waits for as it waits, instead of nothing until it is up.
    { logger, abortOnError: false, bodyParser: spec.bodyParser ?? true },
  );
  app.useGlobalFilters(spec.httpErrorFilter ?? new ServiceErrorHttpFilter());
  installRequestIds(app.getHttpAdapter().getInstance(), () => logger.isLevelEnabled('debug'));
  if (slowBodies) holdBodiesTo(app.getHttpAdapter().getInstance(), requestTimeoutMs, slowBodies);
  await spec.configure?.(app);
  let busServer: BusServer | undefined;
  if (spec.busQueue) {
    const bus = app.get<BusOptions>(BUS_OPTIONS);
    const strategy = (busServer = new BusServer(app.get(NATS_CONNECTION), bus.prefix, spec.busQueue));
    // Deferred, so that the bus handlers are built after the global filter is set. The HTTP app
    // runs the lifecycle hooks (onModuleInit…) once, below; the bus part must not run them a
    // second time, or every service would subscribe, LISTEN and start its timers twice.
    const microservice = app.connectMicroservice({ strategy }, { deferInitialization: true }) as NestMicroservice;
    microservice.useGlobalFilters(new BusExceptionFilter());
    microservice.setIsInitHookCalled(true);
  }
  // Every service is initialised before the bus delivers its first request.
  await app.init();
  await app.startAllMicroservices();
  if (spec.port) await app.listen(spec.port(env), spec.host?.(env) ?? '0.0.0.0');
  const checks = app.get<ReadinessCheck[]>(READINESS_CHECKS);
  const management = await startManagementServer(
    {
      // An app with bus handlers is ready only while they are subscribed (`consumers`).
      checks: busServer ? [...checks, busServer.readiness()] : checks,
      registry: app.get<Registry>(METRICS_REGISTRY),
      // /ready names a state; the error behind it goes to the log, once per change.
      onChange: (check, state, cause) =>
        state === 'ok'
          ? logger.log({ msg: 'ready again', check }, 'Readiness')
          : logger.warn({ msg: 'not ready', check, state, error: (cause as Error | undefined)?.message }, 'Readiness'),
    },
    env.MANAGEMENT_HOST,
    env.MANAGEMENT_PORT,
  );
  // SIGTERM/SIGINT: the drain, step by step (shutdown.ts, README.md).
  drainOnSignals({ app, management, busServer, logger, graceMs: env.SHUTDOWN_GRACE_MS ?? DEFAULT_SHUTDOWN_GRACE_MS });
  logger.log(
    {
      msg: 'listening',
      port: spec.port ? (app.getHttpServer().address() as AddressInfo).port : undefined,
      management: management.port,
    },
    'Bootstrap',
  );
  return app;
}

/** Exit non-zero with one clear line instead of a crash dump. */
export function exitOnStartupFailure(service: string): (error: Error) => never {
  return (error) => {
    process.stderr.write(`${JSON.stringify({ level: 'fatal', service, msg: `failed to start: ${error.message}` })}\n`);
    process.exit(1);
  };
}
