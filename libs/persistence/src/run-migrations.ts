import { Client } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';

/**
 * Run a service's migrations as a one-shot step, safe to start from several
 * replicas at once: a session-level advisory lock per schema serialises them
 * (TypeORM's own `migrationsRun` has no lock). Creates the schema first if it is
 * missing, since TypeORM keeps its migrations table inside it.
 */
export async function runMigrations(options: DataSourceOptions & { url?: string; schema?: string }): Promise<string[]> {
  const schema = options.schema ?? 'public';
  const lock = new Client({ connectionString: options.url });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [`mcpgw:migrations:${schema}`]);
    // Only when missing: CREATE SCHEMA (even IF NOT EXISTS) needs CREATE on the database,
    // which a role that merely owns its schema (deploy/compose/postgres-roles.sh) lacks.
    const exists = await lock.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (exists.rowCount === 0) await lock.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '""')}"`);
    const dataSource = new DataSource(options);
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
