import { UnavailableError } from '@mcpgw/contracts';

/**
 * SQLSTATE classes and codes that say the server cannot serve now (it is shutting
 * down, starting up, or the connection broke), not that the statement is wrong:
 * 08 connection exception, 57P01 admin shutdown, 57P02 crash shutdown, 57P03
 * cannot connect now, 53300 too many connections.
 */
const UNREACHABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;
/** Socket and pool errors of node-postgres before or between statements. */
const UNREACHABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
const UNREACHABLE_MESSAGE =
  /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed/;

/** True when `error` means the database is unreachable for now (retry later), not that a query failed. */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (UNREACHABLE_SQLSTATE.test(code) || UNREACHABLE_ERRNO.has(code))) return true;
  return UNREACHABLE_MESSAGE.test(error.message);
}

/**
 * The database cannot be reached: an `unavailable` ServiceError, so every
 * transport answers it as "try again" (surface A -32603, surface B 503, a bus
 * reply `unavailable`), without the driver's text (it may name hosts).
 */
export class DatabaseUnavailableError extends UnavailableError {
  constructor() {
    super('the database is unavailable');
  }
}

/** `error`, or a DatabaseUnavailableError in its place when it says the database is unreachable. */
export function asDatabaseError(error: unknown): unknown {
  return isDatabaseUnreachable(error) ? new DatabaseUnavailableError() : error;
}
