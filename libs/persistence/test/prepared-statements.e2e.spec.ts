import { Kysely, sql } from 'kysely';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeteredPostgresDialect, PREPARED, SqlMeter } from '../src';

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A database of its own, and one connection, so that the session's prepared statements can be read back. */
describe('PREPARED statements, on a real PostgreSQL', () => {
  const database = `mcpgw_prepared_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  let pool: pg.Pool;
  let db: Kysely<unknown>;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${database}`;
    pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
    db = new Kysely<unknown>({ dialect: new MeteredPostgresDialect({ pool }, new SqlMeter()) });
    await sql`CREATE TABLE t (id int PRIMARY KEY, v text NOT NULL)`.execute(db);
  });

  afterAll(async () => {
    await pool?.end();
    await admin.query(`DROP DATABASE IF EXISTS ${database}`);
    await admin.end();
  });

  const inSession = async () =>
    (await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements ORDER BY name`.execute(db)).rows.map(
      (row) => row.statement,
    );

  it('a marked statement is parsed once per connection and runs with new values each time', async () => {
    const insert = (id: number, v: string) =>
      sql<{
        id: number;
      }>`${PREPARED}INSERT INTO t (id, v) SELECT * FROM unnest(${[id]}::int[], ${[v]}::text[]) RETURNING id`;
    expect((await insert(1, 'a').execute(db)).rows).toEqual([{ id: 1 }]);
    expect((await insert(2, 'b').execute(db)).rows).toEqual([{ id: 2 }]);
    await sql`SELECT v FROM t WHERE id = ${1}`.execute(db);

    const statements = await inSession();
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^\/\* prepared \*\/ INSERT INTO t/);
    expect((await sql<{ v: string }>`SELECT v FROM t ORDER BY id`.execute(db)).rows).toEqual([{ v: 'a' }, { v: 'b' }]);
  });

  it('in a transaction too, and an error in one leaves the statement usable', async () => {
    const insert = (id: number) => sql`${PREPARED}INSERT INTO t (id, v) VALUES (${id}::int, 'x')`;
    await expect(db.transaction().execute((tx) => insert(1).execute(tx))).rejects.toThrow(/duplicate key/);
    await db.transaction().execute((tx) => insert(3).execute(tx));
    await insert(4).execute(db);
    expect((await sql<{ n: number }>`SELECT count(*)::int AS n FROM t`.execute(db)).rows).toEqual([{ n: 4 }]);
    expect(await inSession()).toHaveLength(2);
  });
});
