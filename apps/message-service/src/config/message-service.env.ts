import {
  DatabaseEnv,
  DeploymentEnv,
  HttpEnv,
  LogEnv,
  ManagementEnv,
  NatsEnv,
  NoPlaceholderInProduction,
  ShutdownEnv,
  TracingEnv,
  validateEnv,
} from '@mcpgw/config';
import { IsIn, IsInt, IsString, Max, Min, MinLength, ValidateIf } from 'class-validator';

/**
 * The message service: its REST mirror, the agents' inboxes on JetStream, waits,
 * and how long channels are kept.
 */
export class MessageServiceSettings {
  /** The REST mirror's port (internal: its callers need MESSAGE_SERVICE_TOKEN). */
  @IsInt()
  @Min(0)
  @Max(65535)
  MESSAGE_SERVICE_PORT: number = 3100;

  /**
   * Where the REST mirror listens. Its callers need MESSAGE_SERVICE_TOKEN; keep it
   * on loopback or a private network all the same. Probes and metrics use the management port.
   */
  @IsString()
  MESSAGE_SERVICE_HOST: string = '127.0.0.1';

  /** What the REST mirror's callers present (`Authorization: Bearer …`, 32+ characters); unset: the mirror is off. */
  @ValidateIf((env: MessageServiceSettings) => env.MESSAGE_SERVICE_TOKEN !== '')
  @MinLength(32)
  @NoPlaceholderInProduction()
  MESSAGE_SERVICE_TOKEN: string = '';

  /** Where JetStream keeps agent inboxes: `file` (survives a NATS restart) or `memory` (faster, lost on a NATS restart). */
  @IsIn(['file', 'memory'])
  INBOX_STORAGE: 'file' | 'memory' = 'file';

  /**
   * Copies of the inbox stream in a NATS cluster (3 survives the loss of a server; at most 5,
   * JetStream's limit); the agents' consumers inherit it. Applied when the stream is made and
   * at every start (a stream made with 1 is raised, or lowered to match)
   * (libs/bus/README.md#the-inbox-stream).
   */
  @IsInt()
  @Min(1)
  @Max(5)
  INBOX_REPLICAS: number = 1;

  /**
   * The longest a single wait may last, whatever the caller asks; a longer call
   * simply waits again, so it need not match CALL_TIMEOUT_MAX_MS (gateway).
   */
  @IsInt()
  @Min(1_000)
  WAIT_MAX_MS: number = 600_000;

  /**
   * Channels, with their messages (tool arguments and results), are deleted
   * this long after their last message (30 days). See retention/README.md.
   */
  @IsInt()
  @Min(1)
  CHANNEL_RETENTION_SECONDS: number = 2_592_000;

  /**
   * The same for a channel that only ever held one call (one chat_message and
   * its reply, e.g. a stateless call without a conversation handle): 1 day.
   * Keep it at least IDEMPOTENCY_TTL_SECONDS (gateway).
   */
  @IsInt()
  @Min(1)
  SINGLE_CALL_RETENTION_SECONDS: number = 86_400;

  /** How often a replica looks for expired channels (one replica at a time purges). */
  @IsInt()
  @Min(100)
  RETENTION_PURGE_INTERVAL_MS: number = 600_000;

  /** Channels deleted per statement (with their messages), so a purge never holds long locks. */
  @IsInt()
  @Min(1)
  @Max(10_000)
  RETENTION_PURGE_BATCH: number = 500;
}

/** /health, /ready and /metrics on their own port. */
export class MessageServiceManagementEnv extends ManagementEnv {
  override MANAGEMENT_PORT = 9100;
}

export function loadEnv(env: NodeJS.ProcessEnv = process.env) {
  return validateEnv(
    env,
    DeploymentEnv,
    NatsEnv,
    DatabaseEnv,
    LogEnv,
    TracingEnv,
    MessageServiceManagementEnv,
    HttpEnv,
    ShutdownEnv,
    MessageServiceSettings,
  );
}
export type MessageServiceEnv = ReturnType<typeof loadEnv>;
export const MESSAGE_SERVICE_ENV = Symbol('MESSAGE_SERVICE_ENV');
