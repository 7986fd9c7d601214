import { sql } from 'kysely';

/**
 * Put in the result of a statement run outside a transaction
 * (``sql`… SELECT id, ${ASYNC_COMMIT} FROM done` ``) to commit it without
 * waiting for its WAL to reach the disk: `synchronous_commit` is `off` for its
 * own transaction only (`set_config(…, true)`), read by PostgreSQL at the
 * commit. Others see the change at once, as always; a crash of PostgreSQL
 * itself (not of the app) may lose the last few hundred milliseconds of such
 * commits, never corrupt or reorder them.
 *
 * Only for bookkeeping whose loss someone notices and makes good: a webhook
 * attempt recorded late is sent again when its lease ends, with the same
 * `webhook-id` (at least once, as documented). Never for what a caller was
 * told is stored. Evaluated once per result row: a statement that returns no
 * row commits as usual, having changed nothing the caller relies on.
 */
export const ASYNC_COMMIT = sql<string>`set_config('synchronous_commit', 'off', true)`;
