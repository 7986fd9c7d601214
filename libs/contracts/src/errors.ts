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

export class UnavailableError extends ServiceError {
  constructor(message: string) {
    super('unavailable', message);
  }
}
