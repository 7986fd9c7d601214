import { DatabaseEnv, HttpEnv, LogEnv, ManagementEnv, NatsEnv, ShutdownEnv, validateEnv } from '@mcpgw/config';
import { IsIn, IsInt, IsString, Max, Min } from 'class-validator';

export class MessageServiceSettings {
  @IsInt()
  @Min(0)
  @Max(65535)
  MESSAGE_SERVICE_PORT: number = 3100;

  /**
   * Where the REST mirror listens. It has no authentication of its own: keep it
   * on loopback or a private network. Probes and metrics use the management port.
   */
  @IsString()
  MESSAGE_SERVICE_HOST: string = '127.0.0.1';

  /** Where JetStream keeps agent inboxes: `file` (survives a NATS restart) or `memory` (faster). */
  @IsIn(['file', 'memory'])
  INBOX_STORAGE: 'file' | 'memory' = 'file';

  /** The longest a single wait may last, whatever the caller asks. */
  @IsInt()
  @Min(1_000)
  WAIT_MAX_MS: number = 600_000;
}

/** /health, /ready and /metrics on their own port. */
export class MessageServiceManagementEnv extends ManagementEnv {
  override MANAGEMENT_PORT = 9100;
}

export function loadEnv(env: NodeJS.ProcessEnv = process.env) {
  return validateEnv(
    env,
    NatsEnv,
    DatabaseEnv,
    LogEnv,
    MessageServiceManagementEnv,
    HttpEnv,
    ShutdownEnv,
    MessageServiceSettings,
  );
}
export type MessageServiceEnv = ReturnType<typeof loadEnv>;
export const MESSAGE_SERVICE_ENV = Symbol('MESSAGE_SERVICE_ENV');
