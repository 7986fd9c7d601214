import { DATABASE_UNAVAILABLE, UnavailableError } from '@mcpgw/contracts';

/**
 * SQLSTATE classes and codes that say the server cannot serve now (it is shutting
 * down, starting up, or the connection broke), not that the statement is wrong:
 * 08 connection exception, 57P01 admin shutdown, 57P02 crash shutdown, 57P03
 * cannot connect now, 53300 too many connections, 25006 read-only transaction
 * (a primary that became a standby, or a standby reached after a failover: the
 * connection must go and a new one find the primary).
 */
const UNREACHABLE_SQLSTATE = /^(08...|57P0[123]|53300|25006)$/;
/** Socket and pool errors of node-postgres before or between statements. */
const UNREACHABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
const UNREACHABLE_MESSAGE =
  /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed|Connection ended|no host (is|was) (read-write|the primary)/;

/** True when `error` means the database is unreachable for now (retry later), not that a query failed. */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (UNREACHABLE_SQLSTATE.test(code) || UNREACHABLE_ERRNO.has(code))) return true;
  return UNREACHABLE_MESSAGE.test(error.message);
}

/**
 * The database cannot be reached: an `unavailable` ServiceError, so every
 * transport answers it as "try again" (surface A -32603, surface B 503, a bus
 * reply `unavailable` marked `database_unavailable`), without the driver's text
 * (it may name hosts). Work that fails so is held and tried again
 * (`DatabaseHold`) until its deadline.
 */
export class DatabaseUnavailableError extends UnavailableError {
  constructor(
    message = 'the database is unavailable',
    /**
     * The server said so itself (an error with a SQLSTATE: shutting down, starting up,
     * read-only): the statement did not run. Otherwise the connection just broke.
     */
    readonly serverRefused = false,
  ) {
    super(message, [DATABASE_UNAVAILABLE]);
  }
}

/**
 * A COMMIT (or a statement outside a transaction that wrote) whose connection
 * broke before its answer: it may have been applied, so it is not tried again.
 */
export class CommitOutcomeUnknownError extends DatabaseUnavailableError {
  constructor() {
    super('the database became unavailable during a commit; its outcome is unknown');
  }
}

/** DB_OUTAGE_MAX_HELD pieces of work already wait for the database: this one fails at once. */
export class HeldTooManyError extends DatabaseUnavailableError {
  constructor() {
    super('the database is unavailable and too much work already waits for it (DB_OUTAGE_MAX_HELD)');
  }
}

/** `error`, or a DatabaseUnavailableError in its place when it says the database is unreachable. */
export function asDatabaseError(error: unknown): unknown {
  if (!isDatabaseUnreachable(error)) return error;
  const code = (error as { code?: unknown }).code;
  return new DatabaseUnavailableError(undefined, typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code));
}
