import { isolatedEnvironment, type Isolation } from '@mcpgw/devstack';
import { MeteredPostgresDialect, SqlMeter } from '@mcpgw/persistence';
import { Kysely, sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '@mcpgw/contracts';
import type { GatewayDb } from '../src/database/schema';
import { IdempotencyStore, type RecordKey } from '../src/idempotency/idempotency.store';

const RECORDS = 5_000;

/**
 * A completion looks its records up by their key, however the table has grown
 * since the gateway started (idempotency.store.ts, `completeMany`). A plan kept
 * from when the table was empty joined a sequential scan of every record, so
 * each completion read the whole day's records. One connection, so that what
 * its first completions planned is what the last one runs.
 */
describe('idempotency completions on a table that grew after they started', () => {
  let isolation: Isolation;
  let pool: pg.Pool;
  let db: GatewayDb;
  let admin: pg.Client;
  let store: IdempotencyStore;

  beforeAll(async () => {
    isolation = await isolatedEnvironment('idem-plan', { migrated: true, auth: false });
    pool = new pg.Pool({ connectionString: isolation.databaseUrl, max: 1, options: '-c search_path=gateway' });
    pool.on('error', () => undefined); // the database's removal ends the connection
    db = new Kysely({ dialect: new MeteredPostgresDialect({ pool }, new SqlMeter()) }) as GatewayDb;
    admin = new pg.Client({ connectionString: isolation.databaseUrl, options: '-c search_path=gateway' });
    await admin.connect();
    // Nothing re-plans behind the test's back: an ANALYZE would drop any plan the connection keeps.
    await admin.query('ALTER TABLE idempotency_records SET (autovacuum_enabled = false)');
    store = new IdempotencyStore(db);
  });

  afterAll(async () => {
    await db?.destroy();
    await admin?.end();
    await isolation?.remove();
  });

  const message = (): ChatMessage =>
    ({
      id: randomUUID(),
      type: 'chat_message',
      agent_id: 'plan-agent',
      created_at: new Date().toISOString(),
    }) as ChatMessage;
  const keyed = (): RecordKey => ({ agentId: 'plan-agent', caller: 'apikey:plan', key: randomUUID() });
  const claimAndComplete = async (id: RecordKey) => {
    const record = { fingerprint: Buffer.alloc(32), toolId: randomUUID(), message: message(), surface: 'a2a' };
    expect(await store.claim(id, record, 3600)).toBe('new');
    return store.complete(id, `{"result":"${id.key}"}`);
  };
  /** Tuples read by sequential scans of the records so far, with this connection's counts flushed first. */
  const scanned = async () => {
    await sql`SELECT pg_stat_force_next_flush()`.execute(db);
    await sql`SELECT 1`.execute(db);
    const { rows } = await admin.query<{ n: string }>(
      `SELECT seq_tup_read AS n FROM pg_stat_user_tables WHERE relid = 'gateway.idempotency_records'::regclass`,
    );
    return Number(rows[0].n);
  };

  it('probes the primary key, not a scan of every record', async () => {
    // Completions on a near-empty table, one at a time: more than the five PostgreSQL plans before it may keep one.
    for (let i = 0; i < 10; i++) {
      const id = keyed();
      expect(await claimAndComplete(id)).toBe(`{"result":"${id.key}"}`);
    }
    await admin.query(
      `INSERT INTO idempotency_records (agent_id, caller, key, fingerprint, tool_id, message, expires_at)
       SELECT 'plan-agent', 'apikey:other', 'k' || n, '\\x00', gen_random_uuid(), '{}', now() + interval '1 hour'
         FROM generate_series(1, $1::int) AS n`,
      [RECORDS],
    );
    const before = await scanned();
    const ids = Array.from({ length: 12 }, keyed);
    const results = await Promise.all(ids.map(claimAndComplete));
    expect(results).toEqual(ids.map((id) => `{"result":"${id.key}"}`));
    expect(await scanned()).toBeLessThan(before + RECORDS);
  });
});
