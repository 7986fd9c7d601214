import type { DataSourceOptions } from 'typeorm';
import { parseDatabaseUrl } from './database-url';
import { hostSelectingClient } from './host-selecting-client';
import { MeteredSqlLogger } from './sql-meter';

/**
 * How long a new connection may take, host selection included (every host of a
 * multi-host URL shares it): a server that accepts TCP but never answers (stopped,
 * overloaded, half-failed over) is given up on within seconds, the pool's waiter
 * gets an error that says "unreachable", and the next host (or the next try) runs.
 */
export const CONNECTION_TIMEOUT_MS = 5_000;
/**
 * TCP keepalive's first probe on an idle connection: a peer that vanished without
 * a FIN or RST (a host gone, a partition) is noticed by the kernel this long after
 * the last traffic plus its probes (`net.ipv4.tcp_keepalive_intvl` × `_probes`,
 * which Node cannot set per socket; lower them on the host for faster detection).
 * A stopped (SIGSTOP) server still answers probes from its kernel: it is waited
 * for, not failed: no client-side statement timeout is set, so a paused server's
 * statements complete when it resumes.
 */
export const KEEPALIVE_INITIAL_DELAY_MS = 5_000;

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
  const target = parseDatabaseUrl(settings.url);
  return {
    type: 'postgres',
    // A multi-host URL is one TypeORM and node-postgres cannot read: they get its first
    // host's URL, and every connection the pool opens picks its host (host-selecting-client.ts).
    url: target.hostUrl(0),
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
      ...(target.selectsHost ? { Client: hostSelectingClient(target) } : {}),
      // A connection attempt (or a wait for a free client) that takes longer fails, so a
      // database that vanished mid-handshake cannot hold a caller (or a group commit) forever.
      connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
      options: `-c search_path=${settings.schema}`,
      application_name: `mcpgw-${settings.schema}`,
    },
  };
}
