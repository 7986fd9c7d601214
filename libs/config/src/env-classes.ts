import { IsIn, IsInt, IsString, Matches, Max, Min, MinLength, ValidateIf } from 'class-validator';
import { isProduction } from './secrets';

/**
 * Deployment: what kind of deployment this is. `production` (the Docker image
 * sets it) refuses what only a development machine may run with: secrets
 * missing or left at a placeholder, a NATS connection without credentials.
 */
export class DeploymentEnv {
  /**
   * `production` (the Docker image sets it) refuses to start without the secrets
   * replicas must share, with a secret left at a placeholder (any value holding
   * `replace-me`, `REPLACE_ME`, `change-me` or `not-for-production`, as
   * `.env.example` and `deploy/k8s/secret.example.yaml` ship them), or without
   * NATS_CREDS; the error names the variable, never its value.
   */
  @IsString()
  NODE_ENV: string = 'development';
}

/** NATS: where the bus is, and the subject namespace of this deployment. */
export class NatsEnv {
  /** Where NATS is; comma-separated for a cluster. */
  @Matches(/^(nats|tls):\/\/[^\s,]+(,(nats|tls):\/\/[^\s,]+)*$/, { message: 'must be nats://host:port[,nats://…]' })
  NATS_URL: string = 'nats://127.0.0.1:4222';

  /** The subject namespace of one deployment (two stacks can share a NATS server). */
  @Matches(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, { message: 'must be dot-separated subject tokens' })
  BUS_PREFIX: string = 'mcpgw';

  /**
   * A NATS credentials file (user JWT and seed) for this process: its permissions
   * and private reply inbox come with it (libs/bus/src/auth/README.md). Empty:
   * connect without, which NODE_ENV=production refuses unless NATS_ALLOW_ANONYMOUS=true.
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
  /** Where PostgreSQL is; each service keeps its tables in its own schema (the admin CLI uses the gateway's). */
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'must be postgres://user[:password]@host:port/database' })
  DATABASE_URL: string = 'postgres://postgres@127.0.0.1:5432/mcpgw';

  /** Connections in the pool. */
  @IsInt()
  @Min(1)
  @Max(200)
  DATABASE_POOL_SIZE: number = 20;

  /**
   * While PostgreSQL cannot be reached (a restart, a failover), database work waits for
   * it and is tried again, up to this long, or a call's own deadline when that comes
   * first; then it fails `unavailable` (libs/persistence/README.md, "When the database is away").
   */
  @IsInt()
  @Min(0)
  @Max(600_000)
  DB_OUTAGE_HOLD_MS: number = 30_000;

  /**
   * Pieces of database work (statements, transactions, connection attempts) held at once
   * in one process while the database is away; the next fails at once, counted in
   * `mcpgw_db_outage_failed_total{reason="refused"}`.
   */
  @IsInt()
  @Min(0)
  @Max(100_000)
  DB_OUTAGE_MAX_HELD: number = 2_000;
}

/** Logs: structured JSON lines (pino) on stdout, their fields in libs/observability/README.md. */
export class LogEnv {
  /** The lowest level logged: `debug`, `info`, `warn` or `error`. */
  @Matches(/^(debug|info|warn|error)$/)
  LOG_LEVEL: string = 'info';

  /**
   * Names this process in logs and its NATS connection.
   * @defaultValue (the process id)
   */
  @IsString()
  SERVICE_INSTANCE: string = `${process.pid}`;
}

/**
 * HTTP server limits: an app's HTTP server bounds what a slow or idle client
 * can hold of a connection: the whole request (headers and body) must arrive in
 * HTTP_REQUEST_TIMEOUT_MS (a response may take as long as it needs: streams and
 * long tool calls are not cut), the headers in HTTP_HEADERS_TIMEOUT_MS, and an
 * idle kept-alive connection is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS.
 */
export class HttpEnv {
  /**
   * The whole request (headers and body) must arrive within this, else 408;
   * responses and streams are not cut. The gateway's file uploads have
   * FILES_UPLOAD_TIMEOUT_MS instead.
   */
  @IsInt()
  @Min(100)
  HTTP_REQUEST_TIMEOUT_MS: number = 30_000;

  /** The request headers must arrive within this. */
  @IsInt()
  @Min(100)
  HTTP_HEADERS_TIMEOUT_MS: number = 10_000;

  /** An idle kept-alive connection is closed after this. */
  @IsInt()
  @Min(100)
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number = 65_000;
}

/**
 * The management port: it serves /health, /ready and /metrics, apart from the
 * app's own ports. Each app subclasses this to give its own default port.
 */
export class ManagementEnv {
  /** `/health`, `/ready`, `/metrics`, and nothing else. */
  @IsInt()
  @Min(0)
  @Max(65535)
  MANAGEMENT_PORT: number = 9000;

  /** The management port's interface: loopback by default; `0.0.0.0` where a kubelet or Prometheus must reach it. */
  @IsString()
  MANAGEMENT_HOST: string = '127.0.0.1';
}

/**
 * Traces (OpenTelemetry): exported over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT
 * (`/v1/traces` is added); unset, tracing is off and costs nothing. The SDK's own
 * OTEL_BSP_* variables tune the batching. See libs/observability/src/tracing/README.md.
 */
export class TracingEnv {
  /**
   * The OTLP/HTTP collector to export traces to (`/v1/traces` is added); unset:
   * tracing off, at no cost (libs/observability/src/tracing/README.md).
   */
  @Matches(/^(https?:\/\/\S+)?$/, { message: 'must be an http(s):// URL, or empty' })
  OTEL_EXPORTER_OTLP_ENDPOINT: string = '';

  /** `service.name` of this process's spans; empty: the app's name (gateway, message-service, agent-pod). */
  @IsString()
  OTEL_SERVICE_NAME: string = '';
}

/**
 * Shutdown: how long a service may drain on SIGTERM (libs/runtime/README.md): in-flight
 * work finishes or is handed back within SHUTDOWN_GRACE_MS; NATS and the
 * database then get a few seconds more to close, after which the process exits
 * non-zero whatever still blocks. Kubernetes' preStop pause plus all of it must
 * stay below terminationGracePeriodSeconds (45 s in deploy/k8s), hence the cap.
 */
export class ShutdownEnv {
  /**
   * On SIGTERM or SIGINT, how long in-flight work may take to finish (or be
   * handed back) before NATS and the database are closed; the process exits 1
   * if it is still blocked 5 s later.
   */
  @IsInt()
  @Min(0)
  @Max(30_000)
  SHUTDOWN_GRACE_MS: number = 20_000;
}
