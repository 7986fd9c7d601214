import { Client } from 'pg';
import { parseDatabaseUrl } from './database-url';
import { hostSelectingClient } from './host-selecting-client';
import { CONNECTION_TIMEOUT_MS, KEEPALIVE_INITIAL_DELAY_MS } from './postgres-options';

export type NotificationHandler = (payload: string) => void;

/**
 * LISTEN on PostgreSQL channels with one dedicated connection, reconnecting
 * when it drops. Used to invalidate caches: whoever changes a row (an app or
 * the admin CLI) sends `pg_notify` in the same transaction, every replica hears it.
 * After a reconnect, `onReconnect` runs, because notifications sent while
 * disconnected are lost and caches must be dropped.
 *
 * A multi-host `url` (`target_session_attrs=read-write`) is followed through a
 * failover: the connection to the old primary ends, and the next one goes to the
 * host that is the primary now (host-selecting-client.ts), where the channels
 * are listened to again. A server that stops answering is given up on with the
 * pools' connection timeout and keepalive (postgres-options.ts).
 */
export class PgNotifications {
  private client?: Client;
  private closed = false;
  private readonly handlers = new Map<string, NotificationHandler>();
  private readonly ClientClass: typeof Client;

  constructor(
    private readonly url: string,
    private readonly onReconnect: () => void = () => undefined,
    private readonly onError: (error: Error) => void = () => undefined,
  ) {
    const target = parseDatabaseUrl(url);
    this.ClientClass = target.selectsHost ? hostSelectingClient(target) : Client;
  }

  async listen(channel: string, handler: NotificationHandler): Promise<void> {
    this.handlers.set(channel, handler);
    if (this.client) await this.client.query(`LISTEN "${channel}"`);
  }

  async start(): Promise<void> {
    const client = new this.ClientClass({
      connectionString: this.url,
      application_name: 'mcpgw-listener',
      connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
    });
    client.on('notification', (msg) => this.handlers.get(msg.channel)?.(msg.payload ?? ''));
    client.on('error', (error) => {
      this.onError(error);
      void this.restart(client);
    });
    client.on('end', () => void this.restart(client));
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN "${channel}"`);
    } catch (error) {
      // Not left open: a LISTEN refused (a standby) would otherwise keep its connection.
      await client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
  }

  async stop(): Promise<void> {
    this.closed = true;
    await this.client?.end().catch(() => undefined);
  }

  private async restart(dead: Client): Promise<void> {
    if (this.closed || this.client !== dead) return;
    this.client = undefined;
    for (let delay = 200; !this.closed; delay = Math.min(delay * 2, 5_000)) {
      await new Promise((resolve) => setTimeout(resolve, delay));
      try {
        await this.start();
        this.onReconnect();
        return;
      } catch (error) {
        this.onError(error as Error);
      }
    }
  }
}
