import { startReplicatedPostgres, type ReplicatedPostgres } from '@mcpgw/devstack';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseHold, kyselyOver, postgresOptions } from '../src';

interface Tables {
  facts: { id: number; v: string };
}

/**
 * A primary that turns read-only while it still answers (a switchover that demotes it, an
 * operator's `default_transaction_read_only`): the apps' pooled connections to it are healthy
 * to the pool, so without help every write would keep landing there and failing with 25006.
 * Through the apps' own stack (TypeORM's pool from `postgresOptions`, `kyselyOver` with its
 * hold), the write that meets `read-only` ends its session, waits, and is tried again on a new
 * connection, which finds the promoted standby (`target_session_attrs=read-write`).
 */
describe('a primary that turns read-only under open connections', () => {
  let pair: ReplicatedPostgres;
  let dataSource: DataSource;
  let db: Kysely<Tables>;

  beforeAll(async () => {
    pair = await startReplicatedPostgres();
    dataSource = new DataSource(postgresOptions({ url: pair.url, schema: 'public', poolSize: 2 }));
    await dataSource.initialize();
    db = kyselyOver<Tables>(dataSource);
    await sql`CREATE TABLE facts (id int PRIMARY KEY, v text NOT NULL)`.execute(db);
  });

  afterAll(async () => {
    await dataSource?.destroy().catch(() => undefined);
    await pair?.remove();
  });

  it('the write that meets read-only goes to the new primary, and so do the next ones', async () => {
    // Both pooled connections open on the primary, as under load.
    await Promise.all([1, 2].map((id) => db.insertInto('facts').values({ id, v: 'before' }).execute()));
    const port = async () => (await sql<{ port: number }>`SELECT inet_server_port() AS port`.execute(db)).rows[0].port;
    expect(await port()).toBe(pair.primary.port);
    await pair.caughtUp();
    await pair.promote();
    const primary = new pg.Client({ connectionString: pair.primary.url });
    await primary.connect();
    try {
      await primary.query('ALTER SYSTEM SET default_transaction_read_only = on');
      await primary.query('SELECT pg_reload_conf()');
    } finally {
      await primary.end();
    }
    const retried = databaseHold.retried;
    // Two at once: each of the two open connections to the demoted primary meets read-only.
    await Promise.all([3, 4].map((id) => db.insertInto('facts').values({ id, v: 'after' }).execute()));
    expect(databaseHold.retried).toBeGreaterThanOrEqual(retried + 2);
    expect(await Promise.all([port(), port()])).toEqual([pair.standby.port, pair.standby.port]);
    const ids = await db.selectFrom('facts').select('id').orderBy('id').execute();
    expect(ids.map((row) => row.id)).toEqual([1, 2, 3, 4]);
  });
});
