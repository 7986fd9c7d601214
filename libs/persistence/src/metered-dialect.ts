import { Logger } from '@nestjs/common';
import {
  CompiledQuery,
  PostgresDialect,
  type DatabaseConnection,
  type Driver,
  type PostgresDialectConfig,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { CommitOutcomeUnknownError, DatabaseUnavailableError, asDatabaseError } from './database-errors';
import { databaseHold, type HoldDeadline } from './database-hold';
import { preparedName } from './prepared';
import { sqlMeter, type SqlMeter } from './sql-meter';

/**
 * Kysely's PostgreSQL dialect, counting into the same `SqlMeter` as TypeORM's
 * `MeteredSqlLogger`, with the same rules: every statement, BEGIN and COMMIT
 * included, counts once; a commit is an explicit COMMIT or a statement outside
 * a transaction. A wrapped driver (not Kysely's `log` option) because only the
 * driver knows whether a connection is inside a transaction.
 *
 * The pool is not ours (TypeORM opened it), so `destroy` ends nothing.
 */
export class MeteredPostgresDialect extends PostgresDialect {
  constructor(
    config: PostgresDialectConfig,
    private readonly meter: SqlMeter = sqlMeter,
  ) {
    super(config);
  }

  override createDriver(): MeteredDriver {
    return new MeteredDriver(super.createDriver(), this.meter);
  }
}

type CompileQuery = QueryCompiler['compileQuery'];

const log = new Logger('Sql');

/** One per pooled pg client (cached), so a query allocates nothing here. */
export class MeteredConnection implements DatabaseConnection {
  inTransaction = false;
  /** Its pooled connection went back to the pool (broken), and no other took its place yet. */
  released = false;
  /** While lent to work with a deadline (`holdingUntil`): a statement waits out an outage until then at most. */
  holdUntil: HoldDeadline | undefined;

  constructor(
    public inner: DatabaseConnection,
    private readonly meter: SqlMeter,
    private readonly driver: MeteredDriver,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.executeOnce(query);
    } catch (error) {
      // Inside a transaction the whole transaction is tried again (HoldingKysely), not one statement.
      if (this.inTransaction || !(error instanceof DatabaseUnavailableError)) throw error;
      // Cut off before it ran (the server said why), or a read: try it again on a fresh connection,
      // once the database is back. A write whose connection broke under it may have been applied.
      if (!error.serverRefused && !isRead(query.sql)) throw new CommitOutcomeUnknownError();
      // On a fresh connection in place of this one: holding on to the broken one while waiting for
      // another could take every connection of the pool (each statement waiting for a free one).
      return databaseHold.run(
        async () => {
          await this.driver.replaceInner(this);
          return this.executeOnce(query);
        },
        this.holdUntil,
        error,
      );
    }
  }

  private async executeOnce<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const inner = this.inner;
    this.meter.statement(query.sql, this.inTransaction);
    try {
      return await inner.executeQuery<R>(named(query));
    } catch (error) {
      this.meter.failed(query.sql, this.inTransaction);
      // The text, never the parameters: they may be secrets.
      log.error({ msg: 'query failed', error: (error as Error).message, query: query.sql.slice(0, 200) });
      if ((error as { code?: unknown }).code === READ_ONLY) await endSession(inner);
      throw asDatabaseError(error);
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    this.meter.statement(query.sql, this.inTransaction);
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

/** SQLSTATE read_only_sql_transaction: this server is no longer (or not) the primary. */
const READ_ONLY = '25006';

/**
 * A session on a server that turned read-only (a primary demoted in a failover, still
 * answering) is healthy to the pool, which would hand it out again and again. The
 * server ends it (its own backend), so the pool drops it and the next connection
 * looks for the primary (host-selecting-client.ts).
 */
async function endSession(inner: DatabaseConnection): Promise<void> {
  await inner.executeQuery(CompiledQuery.raw('SELECT pg_terminate_backend(pg_backend_pid())')).catch(() => undefined);
}

/** A plain read: trying it again changes nothing. */
function isRead(text: string): boolean {
  return /^\s*(\/\* prepared \*\/\s*)?SELECT\b/i.test(text);
}

/**
 * A statement marked `PREPARED` goes to node-postgres as `{ text, name }`: a
 * named statement, parsed once per connection, then only bound and executed. Kysely hands `sql` to `client.query` as it is, and node-postgres
 * takes a config object there (`prepared-statements.e2e.spec.ts` holds both).
 */
function named(query: CompiledQuery): CompiledQuery {
  const name = preparedName(query.sql);
  return name ? { ...query, sql: { text: query.sql, name } as unknown as string } : query;
}

export class MeteredDriver implements Driver {
  private readonly connections = new WeakMap<DatabaseConnection, MeteredConnection>();
  private initialised?: Promise<void>;
  private initDone = false;

  constructor(
    private readonly inner: Driver,
    private readonly meter: SqlMeter,
  ) {}

  /** Once, when the first connection is asked for (`HoldingKysely` has no driver wrapper that would: kysely.module.ts). */
  init(): Promise<void> {
    return (this.initialised ??= this.inner.init().then(
      () => void (this.initDone = true),
      (error: unknown) => {
        this.initialised = undefined;
        throw error;
      },
    ));
  }

  /** A connection, once the database answers (held while it does not, until `deadline` at most: DatabaseHold). */
  acquireConnection(deadline?: HoldDeadline): Promise<MeteredConnection> {
    return databaseHold.run(() => this.acquireOnce(), deadline);
  }

  private async acquireOnce(): Promise<MeteredConnection> {
    if (!this.initDone) await this.init();
    const inner = await this.acquireInner();
    let connection = this.connections.get(inner);
    if (!connection) this.connections.set(inner, (connection = new MeteredConnection(inner, this.meter, this)));
    return connection;
  }

  /**
   * Give `connection`'s pooled connection back (the pool drops it if it is broken) and put a
   * fresh one in its place (a statement tried again after its connection broke).
   */
  async replaceInner(connection: MeteredConnection): Promise<void> {
    if (!connection.released) {
      connection.released = true;
      this.connections.delete(connection.inner);
      await this.inner.releaseConnection(connection.inner).catch(() => undefined);
    }
    const fresh = await this.acquireInner();
    this.connections.set(fresh, connection);
    connection.inner = fresh;
    connection.released = false;
  }

  /** A pooled connection, its failure named as a database error (unreachable or not). */
  private acquireInner(): Promise<DatabaseConnection> {
    return this.inner.acquireConnection().catch((error: unknown) => {
      throw asDatabaseError(error);
    });
  }

  // Transaction control goes to the inner driver with its own connection (it
  // marks a connection whose ROLLBACK failed, so the pool discards it), and is
  // counted here, in the transaction, like TypeORM's START TRANSACTION/COMMIT.
  async beginTransaction(connection: MeteredConnection, settings: TransactionSettings): Promise<void> {
    connection.inTransaction = true;
    this.meter.statement('BEGIN', true);
    await this.inner.beginTransaction(connection.inner, settings).catch((error: unknown) => {
      throw asDatabaseError(error);
    });
  }

  async commitTransaction(connection: MeteredConnection): Promise<void> {
    this.meter.statement('COMMIT', true);
    try {
      await this.inner.commitTransaction(connection.inner);
    } catch (error) {
      this.meter.failed('COMMIT', true);
      const mapped = asDatabaseError(error);
      // Unless the server said it refused it, a COMMIT cut off may have been applied: not tried again.
      throw mapped instanceof DatabaseUnavailableError && !mapped.serverRefused
        ? new CommitOutcomeUnknownError()
        : mapped;
    } finally {
      connection.inTransaction = false;
    }
  }

  async rollbackTransaction(connection: MeteredConnection): Promise<void> {
    this.meter.statement('ROLLBACK', true);
    try {
      await this.inner.rollbackTransaction(connection.inner);
    } finally {
      connection.inTransaction = false;
    }
  }

  // Savepoints (a ControlledTransaction's) go to the inner driver as they are; counted like statements.
  savepoint(connection: MeteredConnection, name: string, compile: CompileQuery): Promise<void> {
    return this.atSavepoint('savepoint', 'SAVEPOINT', connection, name, compile);
  }

  rollbackToSavepoint(connection: MeteredConnection, name: string, compile: CompileQuery): Promise<void> {
    return this.atSavepoint('rollbackToSavepoint', 'ROLLBACK TO SAVEPOINT', connection, name, compile);
  }

  releaseSavepoint(connection: MeteredConnection, name: string, compile: CompileQuery): Promise<void> {
    return this.atSavepoint('releaseSavepoint', 'RELEASE SAVEPOINT', connection, name, compile);
  }

  private async atSavepoint(
    step: 'savepoint' | 'rollbackToSavepoint' | 'releaseSavepoint',
    statement: string,
    connection: MeteredConnection,
    name: string,
    compile: CompileQuery,
  ): Promise<void> {
    this.meter.statement(statement, true);
    await this.inner[step]!(connection.inner, name, compile);
  }

  async releaseConnection(connection: MeteredConnection): Promise<void> {
    connection.inTransaction = false;
    // Given back already, while a statement waited for a fresh one that never came.
    if (connection.released) return;
    await this.inner.releaseConnection(connection.inner);
  }

  /** The pool belongs to TypeORM's DataSource, which closes it. */
  async destroy(): Promise<void> {}
}
