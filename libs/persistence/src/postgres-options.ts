import type { DataSourceOptions } from 'typeorm';
import { MeteredSqlLogger } from './sql-meter';

export interface PostgresSettings {
  url: string;
  /** The service's own schema: each service owns its tables. */
  schema: string;
  poolSize?: number;
  entities?: DataSourceOptions['entities'];
  migrations?: DataSourceOptions['migrations'];
}

/**
 * TypeORM options shared by every service: its own schema on the search path
 * (so raw SQL in migrations lands there too), never `synchronize`, and a
 * migrations table inside that schema.
 */
export function postgresOptions(settings: PostgresSettings): DataSourceOptions {
  return {
    type: 'postgres',
    url: settings.url,
    schema: settings.schema,
    entities: settings.entities ?? [],
    migrations: settings.migrations ?? [],
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    // Counts every statement for /metrics and logs the failed ones.
    logger: new MeteredSqlLogger(),
    extra: {
      max: settings.poolSize ?? 20,
      // A connection attempt (or a wait for a free client) that takes longer fails, so a
      // database that vanished mid-handshake cannot hold a caller (or a group commit) forever.
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
      options: `-c search_path=${settings.schema}`,
      application_name: `mcpgw-${settings.schema}`,
    },
  };
}
