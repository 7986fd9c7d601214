export interface BusOptions {
  /** nats://host:port, comma-separated for a cluster. */
  url: string;
  /** Subject namespace of this deployment (see contracts `subjects.ts`). */
  prefix: string;
  /** Connection name, shown by `nats server report connections`. */
  name: string;
}

export const BUS_OPTIONS = Symbol('BUS_OPTIONS');
export const NATS_CONNECTION = Symbol('NATS_CONNECTION');
