import type { BusIdentity } from './auth/permissions';

export interface BusOptions {
  /** nats://host:port, comma-separated for a cluster. */
  url: string;
  /** Subject namespace of this deployment (see contracts `subjects.ts`). */
  prefix: string;
  /** Connection name, shown by `nats server report connections`. */
  name: string;
  /** Path of a NATS credentials file (user JWT and seed); unset: connect without credentials. */
  credsFile?: string;
  /**
   * Who this app is on the bus: its replies come to `_INBOX.<prefix>.<identity>`
   * (with or without credentials), the only inbox the services answer for it.
   */
  identity: BusIdentity;
}

/** Bus options from the shared NATS settings (libs/config `NatsEnv`). */
export function busOptionsFromEnv(
  env: { NATS_URL: string; BUS_PREFIX: string; NATS_CREDS: string },
  name: string,
  identity: BusIdentity,
): BusOptions {
  return { url: env.NATS_URL, prefix: env.BUS_PREFIX, name, credsFile: env.NATS_CREDS || undefined, identity };
}

export const BUS_OPTIONS = Symbol('BUS_OPTIONS');
export const NATS_CONNECTION = Symbol('NATS_CONNECTION');
