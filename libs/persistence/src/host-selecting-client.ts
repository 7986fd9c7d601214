import { Client, type ClientConfig } from 'pg';
import { parseDatabaseUrl, type DatabaseUrl, type TargetSessionAttrs } from './database-url';

/** The parts of node-postgres' Client this module resets between hosts (not in its typings). */
interface ClientInternals {
  connection: NodeJS.EventEmitter & { end(): void; stream: { destroy(error?: Error): void } };
  connectionTimeoutHandle?: NodeJS.Timeout;
  _ended: boolean;
}

/** EventEmitter's own state: kept when the client is reset, so listeners added before `connect` stay. */
const EMITTER_KEYS = new Set(['_events', '_eventsCount', '_maxListeners']);

/** The statement that tells whether a session qualifies, and the answer it must give. */
const SESSION_CHECKS: Record<Exclude<TargetSessionAttrs, 'any'>, { sql: string; wanted: string }> = {
  'read-write': { sql: 'SHOW transaction_read_only', wanted: 'off' },
  'read-only': { sql: 'SHOW transaction_read_only', wanted: 'on' },
  primary: { sql: 'SELECT pg_is_in_recovery()::text AS r', wanted: 'false' },
  standby: { sql: 'SELECT pg_is_in_recovery()::text AS r', wanted: 'true' },
};

/**
 * No host of the URL gave a session that qualifies. Its code is ECONNREFUSED so
 * that `isDatabaseUnreachable` (and whoever holds calls on it) reads it as "the
 * database cannot be reached now", as for a single host that refuses.
 */
export class NoDatabaseHostError extends Error {
  readonly code = 'ECONNREFUSED';
  constructor(
    readonly target: TargetSessionAttrs,
    readonly attempts: string[],
  ) {
    super(`no database host gave a ${target} session (${attempts.join('; ')})`);
    this.name = 'NoDatabaseHostError';
  }
}

/**
 * A node-postgres `Client` class for a multi-host `DATABASE_URL`, to give a pool
 * as its `Client` option (pg-pool makes every connection with `new Client(options)`),
 * or to make a connection with. Each connection tries the hosts in order, starting
 * with the last one that qualified (shared by every client of the class, so after
 * a failover the pool's next connections go straight to the new primary), and,
 * unless `target_session_attrs` is `any`, checks the session as libpq does
 * (`SHOW transaction_read_only`, `pg_is_in_recovery()`), ending it and moving on
 * when it does not qualify. When no host qualifies, `connect` fails with a
 * `NoDatabaseHostError`.
 *
 * The connection timeout (`connectionTimeoutMillis`) bounds the whole selection,
 * shared between the hosts still to try, so a hung host (accepting TCP, never
 * answering) costs a share of it, not all of it. A client is reset between
 * hosts (node-postgres' clients connect once): its state is that of a new
 * client for the next host; its listeners stay, and the abandoned connection's
 * events are not passed on.
 */
export function hostSelectingClient(databaseUrl: DatabaseUrl | string): typeof Client {
  const url = typeof databaseUrl === 'string' ? parseDatabaseUrl(databaseUrl) : databaseUrl;
  const check = url.targetSessionAttrs === 'any' ? undefined : SESSION_CHECKS[url.targetSessionAttrs];
  let preferred = 0;

  return class HostSelectingClient extends Client {
    private readonly settings: ClientConfig;
    private builtFor = preferred;
    private selecting = false;

    constructor(config?: ClientConfig | string) {
      const settings: ClientConfig = typeof config === 'string' ? {} : { ...config };
      const host = preferred;
      super({ ...settings, connectionString: url.hostUrl(host) });
      this.settings = settings;
      this.builtFor = host;
    }

    override connect(): Promise<Client>;
    override connect(callback: (error: Error | null, client?: Client) => void): void;
    override connect(callback?: (error: Error | null, client?: Client) => void): Promise<Client> | void {
      const selected = this.select().then(() => this as Client);
      if (!callback) return selected;
      selected.then(
        (client) => callback(null, client),
        (error: Error) => callback(error),
      );
    }

    /** While hosts are tried, the abandoned connections' `error` and `end` are theirs, not this client's. */
    override emit(event: string | symbol, ...args: unknown[]): boolean {
      if (this.selecting && (event === 'error' || event === 'end')) return false;
      return super.emit(event, ...args);
    }

    private async select(): Promise<void> {
      const count = url.hosts.length;
      const budget = this.settings.connectionTimeoutMillis ?? 0;
      const deadline = budget > 0 ? Date.now() + budget : Infinity;
      const start = preferred;
      const attempts: string[] = [];
      this.selecting = true;
      try {
        for (let i = 0; i < count; i++) {
          const index = (start + i) % count;
          const left = deadline - Date.now();
          if (left <= 0) break;
          const timeout = Number.isFinite(left) ? Math.max(Math.floor(left / (count - i)), 1) : 0;
          if (i === 0 && index === this.builtFor) this.setTimeoutOnly(timeout);
          else this.resetFor(index, timeout);
          const refusal = await this.tryHost(timeout).catch((error: Error) => error.message);
          if (refusal === undefined) {
            preferred = index;
            return;
          }
          attempts.push(`${url.label(index)}: ${refusal}`);
          await this.abandon();
        }
        if (attempts.length === 0) attempts.push('connection timeout');
        throw new NoDatabaseHostError(url.targetSessionAttrs, attempts);
      } finally {
        this.selecting = false;
      }
    }

    /** Connects to the host the client is set for: undefined when the session qualifies, else why not. */
    private async tryHost(timeout: number): Promise<string | undefined> {
      await super.connect();
      if (!check) return undefined;
      const internals = this as unknown as ClientInternals;
      const timer =
        timeout > 0 ? setTimeout(() => internals.connection.stream.destroy(new Error('timeout expired')), timeout) : 0;
      try {
        const { rows } = await this.query<Record<string, string>>(check.sql);
        const answer = Object.values(rows[0] ?? {})[0];
        return answer === check.wanted ? undefined : `not ${url.targetSessionAttrs} (${check.sql}: ${answer})`;
      } finally {
        clearTimeout(timer);
      }
    }

    /** The first try, on the host the client was built for: only its share of the timeout. */
    private setTimeoutOnly(timeout: number): void {
      (this as unknown as { _connectionTimeoutMillis: number })._connectionTimeoutMillis = timeout;
    }

    /** The state of a new client for host `index` (its own connection, timeout and parameters), keeping the listeners. */
    private resetFor(index: number, timeout: number): void {
      const fresh = new Client({
        ...this.settings,
        connectionString: url.hostUrl(index),
        connectionTimeoutMillis: timeout,
      });
      for (const key of Object.getOwnPropertyNames(fresh)) {
        if (EMITTER_KEYS.has(key)) continue;
        Object.defineProperty(this, key, Object.getOwnPropertyDescriptor(fresh, key)!);
      }
      this.builtFor = index;
    }

    /** Ends the current attempt's connection and waits until its events have all been emitted (and dropped). */
    private async abandon(): Promise<void> {
      const internals = this as unknown as ClientInternals;
      clearTimeout(internals.connectionTimeoutHandle);
      const connection = internals.connection;
      connection.on('error', () => undefined);
      if (!internals._ended) {
        const ended = new Promise<void>((resolve) => connection.once('end', () => resolve()));
        connection.end();
        const forced = setTimeout(() => connection.stream.destroy(), 1_000);
        await ended;
        clearTimeout(forced);
      }
      // The client's own `end` is emitted on the next tick after the connection's.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
}
