import { Logger as NestLogger } from '@nestjs/common';
import type { Logger, QueryRunner } from 'typeorm';

/**
 * Counts of SQL statements this process sent and of transactions it committed
 * (an explicit COMMIT, or a statement outside a transaction: PostgreSQL
 * commits each of those on its own). One meter per process.
 */
export class SqlMeter {
  statements = 0;
  commits = 0;
  /** Failed statements: `commit` (a COMMIT, or a statement outside a transaction) or `in_transaction`. */
  readonly errors = { commit: 0, in_transaction: 0 };

  /** One statement; `inTransaction` when it runs inside BEGIN … COMMIT. */
  statement(sql: string, inTransaction: boolean): void {
    this.statements++;
    if (!inTransaction || /^\s*COMMIT\b/i.test(sql)) this.commits++;
  }

  /** A statement failed: one whose failure loses a commit (COMMIT, or outside a transaction) or one inside. */
  failed(sql: string, inTransaction: boolean): void {
    this.errors[!inTransaction || /^\s*COMMIT\b/i.test(sql) ? 'commit' : 'in_transaction']++;
  }
}

export const sqlMeter = new SqlMeter();

/** `mcpgw_sql_statements_total` and `mcpgw_sql_commits_total`, read from the process's meter. */
export const sqlMetrics = [
  {
    name: 'mcpgw_sql_statements_total',
    help: 'SQL statements sent to PostgreSQL by this process',
    labelNames: [] as const,
    read: (): Iterable<[Record<string, string>, number]> => [[{}, sqlMeter.statements]],
  },
  {
    name: 'mcpgw_sql_commits_total',
    help: 'transactions committed by this process (explicit, or one statement each)',
    labelNames: [] as const,
    read: (): Iterable<[Record<string, string>, number]> => [[{}, sqlMeter.commits]],
  },
  {
    name: 'mcpgw_sql_errors_total',
    help: 'SQL statements PostgreSQL refused, by whether a commit was lost with it (commit) or a transaction failed inside (in_transaction)',
    labelNames: ['statement'] as const,
    read: (): Iterable<[Record<string, string>, number]> =>
      Object.entries(sqlMeter.errors).map(([statement, value]) => [{ statement }, value]),
  },
];

/**
 * The TypeORM logger of every app: counts each statement into the meter and
 * logs failed ones (their text, never their parameters, which may be secrets).
 */
export class MeteredSqlLogger implements Logger {
  private readonly logger = new NestLogger('Sql');

  constructor(private readonly meter: SqlMeter = sqlMeter) {}

  logQuery(query: string, _parameters?: unknown[], queryRunner?: QueryRunner): void {
    // TypeORM marks the runner in a transaction from START TRANSACTION through COMMIT.
    this.meter.statement(query, !!queryRunner?.isTransactionActive);
  }

  logQueryError(error: string | Error, query: string, _parameters?: unknown[], queryRunner?: QueryRunner): void {
    this.meter.failed(query, !!queryRunner?.isTransactionActive);
    this.logger.error({
      msg: 'query failed',
      error: error instanceof Error ? error.message : error,
      query: query.slice(0, 200),
    });
  }

  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(message: string): void {
    this.logger.log(message);
  }
  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.logger.warn(String(message));
  }
}
