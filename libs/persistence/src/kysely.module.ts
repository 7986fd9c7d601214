import { Inject, Module, type DynamicModule } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import {
  DefaultQueryExecutor,
  Kysely,
  sql,
  type ConnectionProvider,
  type DatabaseConnection,
  type QueryExecutor,
  type TransactionBuilder,
} from 'kysely';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { NOT_HELD, databaseHold, type HoldDeadline } from './database-hold';
import { MeteredPostgresDialect, type MeteredDriver } from './metered-dialect';

/** The app's `Kysely<…>`, typed by the app's schema where it is injected. */
export const KYSELY = Symbol('KYSELY');
/** The `/ready` check of the app's database. */
export const DATABASE_READINESS = Symbol('DATABASE_READINESS');
/** The `/ready` check that the database has the app's latest migration. */
export const MIGRATIONS_READINESS = Symbol('MIGRATIONS_READINESS');

/** `@InjectKysely() db: Kysely<AppTables>`. */
export const InjectKysely = (): ParameterDecorator => Inject(KYSELY);

/**
 * A query builder over the pool TypeORM already opened (one pool per app, one
 * `max`, one search_path), metered like TypeORM's own queries. The pool is read
 * at the first query, once the DataSource is initialised.
 */
export function kyselyOver<DB>(dataSource: DataSource): Kysely<DB> {
  const dialect = new MeteredPostgresDialect({
    pool: async () => {
      const master = (dataSource.driver as PostgresDriver).master;
      guardCheckedOutClients(master as PgPool);
      return master;
    },
  });
  const driver = dialect.createDriver();
  // Its connection provider is each HoldingKysely's own, carrying that one's deadline.
  const executor = new DefaultQueryExecutor(
    dialect.createQueryCompiler(),
    dialect.createAdapter(),
    new HeldConnectionProvider(driver, undefined),
    [],
  );
  return new HoldingKysely<DB>({ dialect, driver, executor }, undefined);
}

/**
 * `db` whose work waits out a database outage (DatabaseHold) until `deadline` at
 * most: getting a connection, a statement tried again, a whole transaction. The
 * call path passes its call's deadline down this way, explicitly (see
 * `HoldDeadline`). `db` as it is when it is not the app's `KYSELY`: a transaction
 * (its statements are held by the transaction, whole), or a copy made by Kysely's
 * `withSchema`/`withPlugin`/`withTables`, which are plain `Kysely`s (nothing on
 * the call path makes one).
 */
export function holdingUntil<DB>(db: Kysely<DB>, deadline: HoldDeadline | undefined): Kysely<DB> {
  return db instanceof HoldingKysely && deadline !== undefined ? db.until(deadline) : db;
}

/** `db` whose work fails at once while the database is away: a readiness probe says so, it does not wait. */
export function withoutHolding<DB>(db: Kysely<DB>): Kysely<DB> {
  return holdingUntil(db, NOT_HELD);
}

interface HoldingPieces {
  dialect: MeteredPostgresDialect;
  driver: MeteredDriver;
  executor: QueryExecutor;
}

/**
 * Kysely whose work waits out an outage (DatabaseHold) until its deadline (none:
 * DB_OUTAGE_HOLD_MS). Its connections carry the deadline while they are lent
 * (`HeldConnectionProvider`), so the driver holds getting one, and a statement
 * tried again, no longer. Its transactions are tried again, whole, while the
 * database cannot be reached: a transaction cut off before its COMMIT was rolled
 * back by the server, so running it again is safe. A COMMIT cut off is not tried
 * again (CommitOutcomeUnknownError). Statements outside transactions are held by
 * the driver (metered-dialect.ts).
 */
class HoldingKysely<DB> extends Kysely<DB> {
  constructor(
    private readonly pieces: HoldingPieces,
    private readonly deadline: HoldDeadline | undefined,
  ) {
    super({
      config: { dialect: pieces.dialect },
      dialect: pieces.dialect,
      driver: pieces.driver,
      executor: pieces.executor.withConnectionProvider(new HeldConnectionProvider(pieces.driver, deadline)),
    });
  }

  /** The same database, its work held until `deadline` at most. */
  until(deadline: HoldDeadline): Kysely<DB> {
    return deadline === this.deadline ? this : new HoldingKysely<DB>(this.pieces, deadline);
  }

  override transaction(): TransactionBuilder<DB> {
    return heldTransaction(super.transaction(), this.deadline);
  }
}

/** A pooled connection from the driver, carrying `deadline` while it is lent (MeteredConnection.holdUntil). */
class HeldConnectionProvider implements ConnectionProvider {
  constructor(
    private readonly driver: MeteredDriver,
    private readonly deadline: HoldDeadline | undefined,
  ) {}

  async provideConnection<T>(consumer: (connection: DatabaseConnection) => Promise<T>): Promise<T> {
    const connection = await this.driver.acquireConnection(this.deadline);
    connection.holdUntil = this.deadline;
    try {
      return await consumer(connection);
    } finally {
      connection.holdUntil = undefined;
      await this.driver.releaseConnection(connection);
    }
  }
}

function heldTransaction<DB>(
  builder: TransactionBuilder<DB>,
  deadline: HoldDeadline | undefined,
): TransactionBuilder<DB> {
  return new Proxy(builder, {
    get(target, property, receiver) {
      if (property === 'execute')
        return <T>(work: Parameters<TransactionBuilder<DB>['execute']>[0]) =>
          databaseHold.run(() => target.execute(work) as Promise<T>, deadline);
      const value: unknown = Reflect.get(target, property, receiver);
      // setIsolationLevel and setAccessMode make a new builder: held too.
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const made: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
        return made && typeof made === 'object' && 'execute' in made
          ? heldTransaction(made as TransactionBuilder<DB>, deadline)
          : made;
      };
    },
  });
}

interface PgClient {
  on(event: 'error', listener: (error: Error) => void): unknown;
}
interface PgPool {
  on(event: 'acquire', listener: (client: PgClient) => void): unknown;
}
const guardedPools = new WeakSet<PgPool>();
const guardedClients = new WeakSet<PgClient>();

/**
 * node-postgres' pool listens for a client's `error` only while the client is
 * idle; Kysely adds no listener while it holds one (between the statements of a
 * transaction, or of a group commit). A server that ends the connection then
 * (a restart: `57P01 terminating connection due to administrator command`)
 * emits an `error` nobody handles, and Node ends the process. Every client the
 * pool hands out gets a listener of its own, once: the error is already
 * reported to the statement that runs, or by the next one on that client
 * (which then fails, and the pool drops the broken client on release).
 */
function guardCheckedOutClients(pool: PgPool): void {
  if (guardedPools.has(pool)) return;
  guardedPools.add(pool);
  pool.on('acquire', (client) => {
    if (guardedClients.has(client)) return;
    guardedClients.add(client);
    client.on('error', () => undefined);
  });
}

/** A readiness check: the database answers a statement. */
export function databaseReadiness(db: Kysely<unknown>): { name: string; check(): Promise<string | void> } {
  return {
    name: 'database',
    // Says so at once while the database is away (nothing held), and is ready again by itself after.
    check: async () => void (await sql`SELECT 1`.execute(withoutHolding(db))),
  };
}

/** The name TypeORM records for a migration, and its timestamp (the name's last 13 digits). */
function migrationName(migration: { name?: string; constructor: { name: string } }): string {
  return migration.name ?? migration.constructor.name;
}

/**
 * A readiness check: the database has the app's latest migration (the newest of
 * those its DataSource lists), in the migrations table of its schema. An app whose
 * schema is behind its code must not serve (the migration Job or init container has
 * not run, or failed): states `not applied: <migration>` (the table lacks it or is
 * not there). Any other failure rejects (`unavailable` on /ready, the error logged).
 */
export function migrationsReadiness(
  db: Kysely<unknown>,
  dataSource: DataSource,
): { name: string; check(): Promise<string | void> } {
  const options = dataSource.options as { schema?: string; migrationsTableName?: string };
  const table = sql.id(options.schema ?? 'public', options.migrationsTableName ?? 'migrations');
  let latest: string | undefined;
  // Looked up on every probe (one indexed row): a database restored from an older backup shows too.
  const latestApplied = async (): Promise<string | void> => {
    latest ??= dataSource.migrations
      .map(migrationName)
      .sort((a, b) => Number(/\d{13}$/.exec(a)?.[0] ?? 0) - Number(/\d{13}$/.exec(b)?.[0] ?? 0))
      .at(-1);
    if (!latest) return;
    try {
      const { rows } = await sql<{ one: number }>`SELECT 1 AS one FROM ${table} WHERE name = ${latest}`.execute(
        withoutHolding(db),
      );
      if (rows.length === 0) return `not applied: ${latest}`;
    } catch (error) {
      if ((error as { code?: string }).code === '42P01') return `not applied: ${latest}`; // undefined_table
      throw error;
    }
  };
  return { name: 'migrations', check: latestApplied };
}

/**
 * Provides `KYSELY`, `DATABASE_READINESS` and `MIGRATIONS_READINESS` to the whole app, next to its
 * `TypeOrmModule.forRoot…` (which keeps running migrations and closes the pool).
 */
@Module({})
export class KyselyModule {
  static forRoot(): DynamicModule {
    return {
      module: KyselyModule,
      global: true,
      providers: [
        {
          provide: KYSELY,
          inject: [getDataSourceToken()],
          useFactory: (dataSource: DataSource) => kyselyOver(dataSource),
        },
        { provide: DATABASE_READINESS, inject: [KYSELY], useFactory: databaseReadiness },
        { provide: MIGRATIONS_READINESS, inject: [KYSELY, getDataSourceToken()], useFactory: migrationsReadiness },
      ],
      exports: [KYSELY, DATABASE_READINESS, MIGRATIONS_READINESS],
    };
  }
}
