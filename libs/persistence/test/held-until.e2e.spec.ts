import { Deadline } from '@mcpgw/contracts';
import { sql, type Kysely } from 'kysely';
import net from 'node:net';
import { DataSource } from 'typeorm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DatabaseUnavailableError,
  GroupCommit,
  databaseHold,
  holdingUntil,
  kyselyOver,
  postgresOptions,
  withoutHolding,
} from '../src';

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * A door in front of the real PostgreSQL: open, it passes connections through; shut, nothing
 * listens on its port (a new connection is refused) and the connections it passed are cut, as
 * when the server stops.
 */
class Door {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async shut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** How long `work` took to settle, and how (its value, or its error). */
async function timed<T>(work: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const started = Date.now();
  try {
    const value = await work;
    return { ms: Date.now() - started, value };
  } catch (error) {
    return { ms: Date.now() - started, error };
  }
}

/**
 * The deadline a call passes down (`holdingUntil`, `GroupCommit.submit`) bounds how long its
 * database work waits out an outage, through the apps' own stack: TypeORM's pool, `kyselyOver`,
 * the metered driver. The database is away while its port refuses connections.
 */
describe('work held until the deadline its caller passes down', () => {
  const url = new URL(ADMIN_URL);
  const door = new Door({ host: url.hostname, port: Number(url.port || 5432) });
  let dataSource: DataSource;
  let db: Kysely<unknown>;
  const select = (on: Kysely<unknown>) => sql<{ one: number }>`SELECT 1 AS one`.execute(on);

  beforeAll(async () => {
    await door.open();
    const through = new URL(ADMIN_URL);
    through.hostname = '127.0.0.1';
    through.port = String(door.port);
    dataSource = new DataSource(postgresOptions({ url: through.toString(), schema: 'public', poolSize: 2 }));
    await dataSource.initialize();
    db = kyselyOver(dataSource);
    await select(db);
  });

  afterEach(async () => {
    databaseHold.configure({ maxHoldMs: 30_000 });
    await door.open();
  });

  afterAll(async () => {
    await dataSource?.destroy().catch(() => undefined);
    await door.shut();
  });

  it('a statement, a transaction and a group commit give up at the deadline, not after DB_OUTAGE_HOLD_MS', async () => {
    databaseHold.configure({ maxHoldMs: 5_000 });
    await door.shut();
    const expired = databaseHold.expired;
    const writes = new GroupCommit<number, number>(async (items, deadline) => {
      await select(holdingUntil(db, deadline));
      return items;
    });
    const [statement, transaction, batch] = await Promise.all([
      timed(select(holdingUntil(db, Deadline.after(400)))),
      timed(
        holdingUntil(db, Deadline.after(400))
          .transaction()
          .execute((tx) => select(tx)),
      ),
      timed(writes.submit(1, Deadline.after(400))),
    ]);
    for (const outcome of [statement, transaction, batch]) {
      expect(outcome.error).toBeInstanceOf(DatabaseUnavailableError);
      expect(outcome.ms).toBeGreaterThanOrEqual(350);
      expect(outcome.ms).toBeLessThan(2_500);
    }
    expect(databaseHold.expired).toBeGreaterThanOrEqual(expired + 3);
  });

  it('work given no deadline waits DB_OUTAGE_HOLD_MS; a readiness probe does not wait at all', async () => {
    databaseHold.configure({ maxHoldMs: 1_200 });
    await door.shut();
    const [unbounded, probe] = await Promise.all([timed(select(db)), timed(select(withoutHolding(db)))]);
    expect(unbounded.error).toBeInstanceOf(DatabaseUnavailableError);
    expect(unbounded.ms).toBeGreaterThanOrEqual(1_150);
    expect(probe.error).toBeInstanceOf(DatabaseUnavailableError);
    expect(probe.ms).toBeLessThan(300);
  });

  it('held work runs once the database is back, inside its deadline', async () => {
    await door.shut();
    const held = timed(select(holdingUntil(db, Deadline.after(10_000))));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await door.open();
    const outcome = await held;
    expect(outcome.error).toBeUndefined();
    expect(outcome.value?.rows).toEqual([{ one: 1 }]);
    expect(outcome.ms).toBeGreaterThanOrEqual(450);
  });

  it("a controlled transaction's savepoints reach the server (a rollback to one undoes what followed it)", async () => {
    const trx = await holdingUntil(db, Deadline.after(5_000)).startTransaction().execute();
    try {
      await sql`CREATE TEMP TABLE held_until_savepoints (n int) ON COMMIT DROP`.execute(trx);
      await sql`INSERT INTO held_until_savepoints VALUES (1)`.execute(trx);
      const saved = await trx.savepoint('before_two').execute();
      await sql`INSERT INTO held_until_savepoints VALUES (2)`.execute(saved);
      const back = await saved.rollbackToSavepoint('before_two').execute();
      const { rows } = await sql<{ n: number }>`SELECT n FROM held_until_savepoints ORDER BY n`.execute(back);
      expect(rows).toEqual([{ n: 1 }]);
      await back.commit().execute();
    } catch (error) {
      await trx.rollback().execute();
      throw error;
    }
  });
});
