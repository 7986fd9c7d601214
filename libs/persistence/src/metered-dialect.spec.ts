import { Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { MeteredPostgresDialect } from './metered-dialect';
import { SqlMeter } from './sql-meter';

/** A pg pool stand-in: one client, every statement recorded. */
function fakePool() {
  const sent: string[] = [];
  let ended = false;
  const client = {
    query: async (text: string) => (
      sent.push(text),
      { command: text.split(' ')[0].toUpperCase(), rowCount: 0, rows: [] }
    ),
    release: () => undefined,
  };
  return { sent, ended: () => ended, pool: { connect: async () => client, end: async () => void (ended = true) } };
}

describe('MeteredPostgresDialect', () => {
  it('counts like the TypeORM logger: a lone statement is a commit, a transaction commits once', async () => {
    const meter = new SqlMeter();
    const { pool, sent } = fakePool();
    const db = new Kysely<unknown>({ dialect: new MeteredPostgresDialect({ pool }, meter) });

    await sql`SELECT 1`.execute(db);
    expect([meter.statements, meter.commits]).toEqual([1, 1]);

    await db.transaction().execute(async (tx) => {
      await sql`UPDATE a SET b = 1`.execute(tx);
      await sql`SELECT pg_notify('c', 'd')`.execute(tx);
    });
    expect(sent).toEqual(['SELECT 1', 'begin', 'UPDATE a SET b = 1', "SELECT pg_notify('c', 'd')", 'commit']);
    expect([meter.statements, meter.commits]).toEqual([5, 2]);

    await db
      .transaction()
      .execute(async (tx) => {
        await sql`SELECT 2`.execute(tx);
        throw new Error('abandon');
      })
      .catch(() => undefined);
    expect([meter.statements, meter.commits]).toEqual([8, 2]);

    // After a rollback the connection is outside a transaction again.
    await sql`SELECT 3`.execute(db);
    expect([meter.statements, meter.commits]).toEqual([9, 3]);
  });

  it('leaves the pool to its owner', async () => {
    const { pool, ended } = fakePool();
    const db = new Kysely<unknown>({ dialect: new MeteredPostgresDialect({ pool }, new SqlMeter()) });
    await sql`SELECT 1`.execute(db);
    await db.destroy();
    expect(ended()).toBe(false);
  });
});
