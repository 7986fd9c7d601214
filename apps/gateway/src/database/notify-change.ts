import { sql, type RawBuilder } from 'kysely';
import { CACHE_CHANNEL } from './database';

/** What a cache notification names (`<topic>:<id>`); see cache/README.md. */
export type CacheTopic = 'agent' | 'apikey' | 'session' | 'grant' | 'quota' | 'webhook' | 'tools' | 'toolchange';

/**
 * Announce that a row changed, to every gateway's cache. Run it in the same
 * transaction as the change: PostgreSQL delivers it only on commit.
 */
export function notifyChange(topic: CacheTopic, id: string): RawBuilder<unknown> {
  return sql`SELECT pg_notify(${sql.lit(CACHE_CHANNEL)}, ${sql.lit(`${topic}:`)} || ${id})`;
}
