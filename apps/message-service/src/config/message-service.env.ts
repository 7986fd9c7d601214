import {
  DatabaseEnv,
  HttpEnv,
  LogEnv,
  ManagementEnv,
  NatsEnv,
  ShutdownEnv,
  TracingEnv,
  validateEnv,
} from '@mcpgw/config';
import { IsIn, IsInt, IsString, Max, Min, MinLength, ValidateIf } from 'class-validator';

export class MessageServiceSettings {
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
  MESSAGE_SERVICE_TOKEN: string = '';

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
    TracingEnv,
    MessageServiceManagementEnv,
    HttpEnv,
    ShutdownEnv,
    MessageServiceSettings,
  );
}
export type MessageServiceEnv = ReturnType<typeof loadEnv>;
export const MESSAGE_SERVICE_ENV = Symbol('MESSAGE_SERVICE_ENV');
