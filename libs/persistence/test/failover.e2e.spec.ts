import { startReplicatedPostgres, type ReplicatedPostgres } from '@mcpgw/devstack';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnreachable, parseDatabaseUrl, PgNotifications, postgresOptions } from '../src';

/**
 * A primary and a streaming standby on this machine (Debian's PostgreSQL binaries),
 * reached through one multi-host URL as the apps reach theirs: the pool made from
 * `postgresOptions`' settings, the LISTEN connection of `PgNotifications`.
 */
describe('a multi-host DATABASE_URL across a pause and a failover', () => {
  let pair: ReplicatedPostgres;
  let pool: pg.Pool;
  let notifications: PgNotifications;
  const heard: string[] = [];
  let reconnects = 0;

  /** A pool as TypeORM makes it from `postgresOptions` (its `url` and `extra`). */
  const poolFor = (url: string) => {
    const options = postgresOptions({ url, schema: 'public', poolSize: 4 }) as { url: string; extra: object };
    return new pg.Pool({ connectionString: options.url, ...options.extra });
  };
  const serverPort = async () => (await pool.query<{ port: number }>('SELECT inet_server_port() AS port')).rows[0].port;

  beforeAll(async () => {
    pair = await startReplicatedPostgres();
    pool = poolFor(pair.url);
    pool.on('error', () => undefined);
    notifications = new PgNotifications(pair.url, () => reconnects++);
    await notifications.listen('failover_test', (payload) => heard.push(payload));
    await notifications.start();
  });

  afterAll(async () => {
    await notifications?.stop();
    await pool?.end().catch(() => undefined);
    await pair?.remove();
  });

  it('writes on the primary and reads them on the standby', async () => {
    expect(parseDatabaseUrl(pair.url).hosts.map((h) => h.port)).toEqual([pair.primary.port, pair.standby.port]);
    await pool.query('CREATE TABLE facts (id int PRIMARY KEY, v text NOT NULL)');
    await pool.query(`INSERT INTO facts VALUES (1, 'before')`);
    expect(await serverPort()).toBe(pair.primary.port);
    const standby = new pg.Client({ connectionString: pair.standby.url });
    await standby.connect();
    try {
      await expect
        .poll(async () => (await standby.query('SELECT v FROM facts WHERE id = 1').catch(() => ({ rows: [] }))).rows)
        .toEqual([{ v: 'before' }]);
      await expect(standby.query(`INSERT INTO facts VALUES (9, 'x')`)).rejects.toThrow(/read-only transaction/);
    } finally {
      await standby.end();
    }
  });

  it('a statement issued while the primary is paused completes once it resumes', async () => {
    await pool.query('SELECT 1'); // a connection in the pool already, as under load
    pair.primary.pause();
    const started = Date.now();
    let settled = false;
    const statement = pool.query(`INSERT INTO facts VALUES (2, 'paused') RETURNING id`).finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(settled).toBe(false);
    pair.primary.resume();
    expect((await statement).rows).toEqual([{ id: 2 }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
  });

  it('after the primary stops and the standby is promoted, the pool and LISTEN go to the new primary', async () => {
    const before = reconnects;
    await pair.caughtUp(); // a switchover: nothing committed is left behind
    await pair.primary.stop('immediate');
    await pair.promote();

    // Connections to the old primary fail once (as the database hold expects: "unreachable"),
    // new ones pick the promoted standby.
    let written: number | undefined;
    for (let attempt = 0; attempt < 5 && written === undefined; attempt++) {
      try {
        written = (await pool.query<{ id: number }>(`INSERT INTO facts VALUES (3, 'after') RETURNING id`)).rows[0].id;
      } catch (error) {
        expect(isDatabaseUnreachable(error)).toBe(true);
      }
    }
    expect(written).toBe(3);
    expect(await serverPort()).toBe(pair.standby.port);
    expect((await pool.query('SELECT id FROM facts ORDER BY id')).rows.map((r) => r.id)).toEqual([1, 2, 3]);

    await expect.poll(() => reconnects, { timeout: 20_000 }).toBeGreaterThan(before);
    await expect
      .poll(
        async () => {
          await pool.query(`SELECT pg_notify('failover_test', 'on the new primary')`);
          return heard;
        },
        { timeout: 20_000 },
      )
      .toContain('on the new primary');
  });
});
