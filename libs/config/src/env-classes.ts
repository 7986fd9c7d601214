import { IsIn, IsInt, IsString, Matches, Max, Min, MinLength, ValidateIf } from 'class-validator';
import { isProduction } from './secrets';

/**
 * What kind of deployment this is. `production` (the Docker image sets it)
 * refuses what only a development machine may run with: secrets missing or left
 * at a placeholder, a NATS connection without credentials.
 */
export class DeploymentEnv {
  @IsString()
  NODE_ENV: string = 'development';
}

/** NATS: where the bus is, and the subject namespace of this deployment. */
export class NatsEnv {
  @Matches(/^(nats|tls):\/\/[^\s,]+(,(nats|tls):\/\/[^\s,]+)*$/, { message: 'must be nats://host:port[,nats://…]' })
  NATS_URL: string = 'nats://127.0.0.1:4222';

  @Matches(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, { message: 'must be dot-separated subject tokens' })
  BUS_PREFIX: string = 'mcpgw';

  /**
   * A NATS credentials file (user JWT and seed) for this process; empty: connect
   * without, which NODE_ENV=production refuses unless NATS_ALLOW_ANONYMOUS=true.
   */
  @ValidateIf((env: NatsEnv) => env.NATS_CREDS !== '' || (isProduction(env) && env.NATS_ALLOW_ANONYMOUS !== 'true'))
  @MinLength(1, {
    message:
      'NATS_CREDS must name a credentials file when NODE_ENV=production (set NATS_ALLOW_ANONYMOUS=true to connect without, on purpose)',
  })
  NATS_CREDS: string = '';

  /**
   * `true`: NODE_ENV=production may connect to NATS without NATS_CREDS (a server
   * that authenticates some other way, or none: every process on its network can
   * then post, reply and read as any app). Set on purpose only.
   */
  @IsIn(['true', 'false'])
  NATS_ALLOW_ANONYMOUS: string = 'false';
}

/** PostgreSQL. Each service keeps its tables in its own schema of this database. */
export class DatabaseEnv {
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'must be postgres://user[:password]@host:port/database' })
  DATABASE_URL: string = 'postgres://postgres@127.0.0.1:5432/mcpgw';

  @IsInt()
  @Min(1)
  @Max(200)
  DATABASE_POOL_SIZE: number = 20;
}

/** Structured logs. */
export class LogEnv {
  @Matches(/^(debug|info|warn|error)$/)
  LOG_LEVEL: string = 'info';

  @IsString()
  SERVICE_INSTANCE: string = `${process.pid}`;
}

/**
 * Limits of an app's HTTP server, so a slow or idle client cannot hold a
 * connection: the whole request (headers and body) must arrive in
 * HTTP_REQUEST_TIMEOUT_MS (a response may take as long as it needs: streams and
 * long tool calls are not cut), the headers in HTTP_HEADERS_TIMEOUT_MS, and an
 * idle kept-alive connection is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS.
 */
export class HttpEnv {
  @IsInt()
  @Min(100)
  HTTP_REQUEST_TIMEOUT_MS: number = 30_000;

  @IsInt()
  @Min(100)
  HTTP_HEADERS_TIMEOUT_MS: number = 10_000;

  @IsInt()
  @Min(100)
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number = 65_000;
}

/**
 * The management port: /health, /ready and /metrics, apart from the app's own
 * ports. Each app subclasses this to give its own default port.
 */
export class ManagementEnv {
  @IsInt()
  @Min(0)
  @Max(65535)
  MANAGEMENT_PORT: number = 9000;

  /** Loopback by default; 0.0.0.0 where a kubelet or Prometheus must reach it. */
  @IsString()
  MANAGEMENT_HOST: string = '127.0.0.1';
}

/**
 * Traces (OpenTelemetry): exported over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT
 * (`/v1/traces` is added); unset, tracing is off and costs nothing. The SDK's own
 * OTEL_BSP_* variables tune the batching. See libs/observability/src/tracing.
 */
export class TracingEnv {
  @Matches(/^(https?:\/\/\S+)?$/, { message: 'must be an http(s):// URL, or empty' })
  OTEL_EXPORTER_OTLP_ENDPOINT: string = '';

  /** `service.name` of this process's spans; empty: the app's name (gateway, message-service, agent-pod). */
  @IsString()
  OTEL_SERVICE_NAME: string = '';
}

/**
 * How long a service may drain on SIGTERM (libs/runtime/README.md): in-flight
 * work finishes or is handed back within SHUTDOWN_GRACE_MS; NATS and the
 * database then get a few seconds more to close, after which the process exits
 * non-zero whatever still blocks. Kubernetes' preStop pause plus all of it must
 * stay below terminationGracePeriodSeconds (45 s in deploy/k8s), hence the cap.
 */
export class ShutdownEnv {
  @IsInt()
  @Min(0)
  @Max(30_000)
  SHUTDOWN_GRACE_MS: number = 20_000;
}
