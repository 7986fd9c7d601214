import { Client } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { parseDatabaseUrl, type DatabaseUrl } from './database-url';
import { hostSelectingClient } from './host-selecting-client';

/**
 * Run a service's migrations as a one-shot step, safe to start from several
 * replicas at once: a session-level advisory lock per schema serialises them
 * (TypeORM's own `migrationsRun` has no lock). Creates the schema first if it is
 * missing, since TypeORM keeps its migrations table inside it. A multi-host
 * `url` picks its host as the pools do (the lock on the primary, where the
 * migrations run), and TypeORM is given its first host's URL, which it can read.
 */
export async function runMigrations(options: DataSourceOptions & { url?: string; schema?: string }): Promise<string[]> {
  const schema = options.schema ?? 'public';
  const target = options.url === undefined ? undefined : parseDatabaseUrl(options.url);
  const LockClient = target?.selectsHost ? hostSelectingClient(target) : Client;
  const lock = new LockClient({ connectionString: options.url });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [`mcpgw:migrations:${schema}`]);
    // Only when missing: CREATE SCHEMA (even IF NOT EXISTS) needs CREATE on the database,
    // which a role that merely owns its schema (deploy/compose/postgres-roles.sh) lacks.
    const exists = await lock.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (exists.rowCount === 0) await lock.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '""')}"`);
    const dataSource = new DataSource(target ? forTypeorm(options, target, LockClient) : options);
    await dataSource.initialize();
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((migration) => migration.name);
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await lock.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
    await lock.end();
  }
}

/** `options` with a URL TypeORM can read, and the pool picking its hosts (when `postgresOptions` did not set that already). */
function forTypeorm(options: DataSourceOptions, target: DatabaseUrl, HostClient: typeof Client): DataSourceOptions {
  const extra = (options as { extra?: Record<string, unknown> }).extra ?? {};
  const client = target.selectsHost && !extra.Client ? { Client: HostClient } : {};
  return { ...options, url: target.hostUrl(0), extra: { ...extra, ...client } } as DataSourceOptions;
}

/** The body of a service's `migrate` entry point: run, print one JSON line, exit. */
export function migrateAndExit(service: string, options: () => DataSourceOptions & { url?: string }): void {
  const write = (line: object) => process.stdout.write(`${JSON.stringify({ service, ...line })}\n`);
  Promise.resolve()
    .then(() => runMigrations(options()))
    .then((applied) => write({ level: 'info', msg: 'migrations done', applied }))
    .catch((error: Error) => {
      write({ level: 'fatal', msg: `migrations failed: ${error.message}` });
      process.exit(1);
    });
}
