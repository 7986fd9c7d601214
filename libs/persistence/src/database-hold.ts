import { Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { DatabaseUnavailableError, HeldTooManyError, CommitOutcomeUnknownError } from './database-errors';

/** How long work may be held, and how much of it at once (DB_OUTAGE_HOLD_MS, DB_OUTAGE_MAX_HELD). */
export interface HoldLimits {
  /** The longest a piece of work waits for the database when nothing tighter (its call's deadline) applies. */
  maxHoldMs: number;
  /** Pieces of work held at once in this process; the next one fails at once (`HeldTooManyError`). */
  maxHeld: number;
}

/**
 * The latest a piece of work waits for the database: the call it serves says how
 * long it has left (`Deadline` from @mcpgw/contracts is one). Passed along
 * explicitly (`holdingUntil(db, deadline)`, `GroupCommit.submit(item, deadline)`), not
 * through an async context: an `AsyncLocalStorage` turns on Node 20's promise hooks
 * for every promise of the process, 4.5 % of a busy gateway's CPU and 5.3 % of a
 * message service's (docs/benchmarks.md, "Issue 44 (the hold's deadline, passed)").
 */
export interface HoldDeadline {
  remainingMs(): number;
}

/** Not held at all: a readiness probe says the database is away at once, it does not wait. */
export const NOT_HELD: HoldDeadline = { remainingMs: () => 0 };

/** The pause between two tries while the database is away: short first, then at most this. */
const FIRST_PAUSE_MS = 50;
const LONGEST_PAUSE_MS = 500;

/**
 * Riding out a database outage (issue 45; libs/persistence/README.md, "When the
 * database is away"). A statement, a transaction or a connection that fails
 * because PostgreSQL cannot be reached (`DatabaseUnavailableError`: refused,
 * restarting, shutting down, read-only after a failover, a connection cut) is
 * tried again, with a short growing pause, until it succeeds or its deadline
 * passes: the deadline of the call it serves (`HoldDeadline`, passed down by the
 * surfaces from the call's own deadline) or DB_OUTAGE_HOLD_MS, whichever comes
 * first. So a restart or a failover shows to callers as slower answers, not as
 * errors.
 *
 * Bounded: at most DB_OUTAGE_MAX_HELD pieces of work wait at once in the
 * process (each holds what its caller holds anyway: its request); the next
 * fails at once with `HeldTooManyError`. A COMMIT cut off by the outage is not
 * tried again (`CommitOutcomeUnknownError`): it may have been applied.
 *
 * One per process (`databaseHold`), like the SQL meter; its counts are
 * `mcpgw_db_outage_*` on /metrics.
 */
export class DatabaseHold {
  private readonly log = new Logger('DatabaseHold');
  private limits: HoldLimits = { maxHoldMs: 30_000, maxHeld: 1_000 };

  /** Held right now. */
  held = 0;
  /** Ever held (each piece of work once, however many tries). */
  heldTotal = 0;
  /** Seconds spent held, summed over the work that was held. */
  heldSeconds = 0;
  /** Tries again after a failure (statements, transactions, connection attempts). */
  retried = 0;
  /** Work refused because DB_OUTAGE_MAX_HELD were held already. */
  refused = 0;
  /** Work that was held until its deadline, and failed. */
  expired = 0;

  configure(limits: Partial<HoldLimits>): void {
    this.limits = { ...this.limits, ...limits };
  }

  /**
   * `attempt`, tried again while it fails with `DatabaseUnavailableError`, until
   * `deadline` (none: DB_OUTAGE_HOLD_MS). `firstError`: the failure of a try already
   * made (the next try pauses first).
   */
  async run<T>(attempt: () => Promise<T>, deadline?: HoldDeadline, firstError?: unknown): Promise<T> {
    let error = firstError;
    if (error === undefined) {
      try {
        return await attempt();
      } catch (failed) {
        error = failed;
      }
    }
    if (!retryable(error)) throw error;
    const started = Date.now();
    const until = started + Math.min(deadline?.remainingMs() ?? Infinity, this.limits.maxHoldMs);
    if (until <= started) throw error;
    if (this.held >= this.limits.maxHeld) {
      this.refused++;
      throw new HeldTooManyError();
    }
    this.held++;
    this.heldTotal++;
    if (this.held === 1) this.log.warn({ msg: 'the database is unavailable; holding work until it is back' });
    try {
      for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
        const left = until - Date.now();
        if (left <= 0) {
          this.expired++;
          throw error;
        }
        await sleep(Math.min(pause, left));
        this.retried++;
        try {
          return await attempt();
        } catch (failed) {
          if (!retryable(failed)) throw failed;
          error = failed;
        }
      }
    } finally {
      this.held--;
      this.heldSeconds += (Date.now() - started) / 1_000;
      if (this.held === 0) this.log.log({ msg: 'no work held for the database any more' });
    }
  }
}

function retryable(error: unknown): boolean {
  return error instanceof DatabaseUnavailableError && !(error instanceof CommitOutcomeUnknownError);
}

export const databaseHold = new DatabaseHold();

/** One unlabelled series read from the hold when /metrics is scraped. */
const series = (name: string, help: string, read: () => number, kind: 'counter' | 'gauge' = 'counter') => ({
  name,
  help,
  kind,
  labelNames: [] as const,
  read: (): Iterable<[Record<string, string>, number]> => [[{}, read()]],
});

/** `mcpgw_db_outage_*`, read from the process's hold. */
export const databaseHoldMetrics = [
  series(
    'mcpgw_db_outage_held',
    'work (statements, transactions, connection attempts) waiting now for the database to come back',
    () => databaseHold.held,
    'gauge',
  ),
  series(
    'mcpgw_db_outage_held_total',
    'work held because the database could not be reached (each piece once)',
    () => databaseHold.heldTotal,
  ),
  series(
    'mcpgw_db_outage_held_seconds_total',
    'seconds work spent held, waiting for the database',
    () => databaseHold.heldSeconds,
  ),
  series(
    'mcpgw_db_outage_retries_total',
    'statements, transactions and connection attempts tried again while the database was away',
    () => databaseHold.retried,
  ),
  {
    name: 'mcpgw_db_outage_failed_total',
    help: 'held work that failed: refused (DB_OUTAGE_MAX_HELD held already) or expired (its deadline passed first)',
    labelNames: ['reason'] as const,
    read: (): Iterable<[Record<string, string>, number]> => [
      [{ reason: 'refused' }, databaseHold.refused],
      [{ reason: 'expired' }, databaseHold.expired],
    ],
  },
];
