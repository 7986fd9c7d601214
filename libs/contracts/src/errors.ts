import type { BusErrorCode } from './bus/operations';

/**
 * The one error hierarchy services throw. Each transport (bus reply, REST,
 * MCP surface) maps `code` to its own wire form in exactly one place, so a
 * service never throws HTTP or RPC exceptions itself.
 */
export class ServiceError extends Error {
  constructor(
    readonly code: BusErrorCode,
    message: string,
    readonly details?: string[],
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidRequestError extends ServiceError {
  constructor(message: string, details?: string[]) {
    super('invalid_request', message, details);
  }
}

export class NotFoundError extends ServiceError {
  constructor(message: string) {
    super('not_found', message);
  }
}

/** A payload the bus cannot carry: its encoding is over the server's `max_payload` (less room for headers). */
export class PayloadTooLargeError extends ServiceError {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super('invalid_request', `${bytes} bytes, the bus carries at most ${limit}`);
  }
}

/**
 * Worth trying again: nothing answered, or the service or its backend failed; not a
 * refusal of the request itself (invalid, or naming nothing that exists).
 */
export function isRetryable(error: unknown): boolean {
  return !(error instanceof ServiceError && (error.code === 'invalid_request' || error.code === 'not_found'));
}

export class UnavailableError extends ServiceError {
  constructor(message: string, details?: string[]) {
    super('unavailable', message, details);
  }
}

/** The `details` mark of an `unavailable` error the database caused (persistence's DatabaseUnavailableError). */
export const DATABASE_UNAVAILABLE = 'database_unavailable';

/** True for an `unavailable` error the database caused, also once it has crossed the bus. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return (
    error instanceof ServiceError && error.code === 'unavailable' && !!error.details?.includes(DATABASE_UNAVAILABLE)
  );
}

/** The `details` mark of a ReplicaDrainingError, which survives the bus frame. */
export const REPLICA_DRAINING = 'replica_draining';

/**
 * A replica that is shutting down gives back what it holds (a wait): ask
 * again at once, and another replica answers. Unlike other `unavailable`
 * errors, nothing is wrong with the backend.
 */
export class ReplicaDrainingError extends ServiceError {
  constructor(message: string) {
    super('unavailable', message, [REPLICA_DRAINING]);
  }
}

/** True for a ReplicaDrainingError, also once it has crossed the bus. */
export function isReplicaDraining(error: unknown): boolean {
  return error instanceof ServiceError && error.code === 'unavailable' && !!error.details?.includes(REPLICA_DRAINING);
}

/** The `details` mark of a KeyReusedError, which survives the bus frame. */
export const KEY_REUSED = 'idempotency_key_reused';

/**
 * A keyed call's chat_message posted again with another fingerprint: the same
 * idempotency key with another tool or other arguments. Refused, never joined
 * to the first posting's reply.
 */
export class KeyReusedError extends ServiceError {
  constructor(message: string) {
    super('invalid_request', message, [KEY_REUSED]);
  }
}

/** True for a KeyReusedError, also once it has crossed the bus. */
export function isKeyReused(error: unknown): boolean {
  return error instanceof ServiceError && error.code === 'invalid_request' && !!error.details?.includes(KEY_REUSED);
}
