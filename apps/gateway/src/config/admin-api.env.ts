import { IsString, Matches } from 'class-validator';

/** The management API (apps/gateway/src/admin-api/README.md). */
export class AdminApiSettings {
  /**
   * The management API's own port, never the public one. Empty: no management
   * API (the default: a gateway serves it only when an operator asks for it).
   */
  @Matches(/^([1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5]|0)?$/, {
    message: 'must be a port number 0-65535, or empty for no management API',
  })
  ADMIN_PORT: string = '';

  /** Its interface: loopback unless an operator opens it (behind TLS and a network policy). */
  @IsString()
  ADMIN_HOST: string = '127.0.0.1';
}

/** The port to serve the management API on, or undefined when it is off. */
export function adminPort(env: { ADMIN_PORT: string }): number | undefined {
  return env.ADMIN_PORT === '' ? undefined : Number(env.ADMIN_PORT);
}
