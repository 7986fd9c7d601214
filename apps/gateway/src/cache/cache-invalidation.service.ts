import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { PgNotifications } from '@mcpgw/persistence';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { CACHE_CHANNEL } from '../database/database';
import type { CacheTopic } from '../database/notify-change';

export type { CacheTopic };
type Listener = (id: string | undefined) => void;

/**
 * Tells this replica's caches that a row changed. Writers (this app or the admin
 * CLI) call `pg_notify` in the writing transaction (see `notifyChange`); every
 * replica LISTENs. After a lost connection, listeners get `undefined`: drop all.
 */
@Injectable()
export class CacheInvalidationService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(CacheInvalidationService.name);
  private readonly listeners = new Map<CacheTopic, Listener[]>();
  private readonly reconnected: (() => void)[] = [];
  private readonly notifications: PgNotifications;

  constructor(@Inject(GATEWAY_ENV) env: GatewayEnv) {
    this.notifications = new PgNotifications(
      env.DATABASE_URL,
      () => {
        this.dropAll();
        for (const hook of this.reconnected) hook();
      },
      (error) => this.logger.warn(`cache listener: ${error.message}`),
    );
  }

  async onModuleInit(): Promise<void> {
    await this.notifications.listen(CACHE_CHANNEL, (payload) => this.dispatch(payload));
    await this.notifications.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.notifications.stop();
  }

  /**
   * Another channel on this replica's one LISTEN connection (the resumable
   * streams' notices); `onReconnect` runs after a lost connection, whose
   * notices are lost.
   */
  async listen(channel: string, handler: (payload: string) => void, onReconnect: () => void): Promise<void> {
    this.reconnected.push(onReconnect);
    await this.notifications.listen(channel, handler);
  }

  on(topic: CacheTopic, listener: Listener): void {
    this.listeners.set(topic, [...(this.listeners.get(topic) ?? []), listener]);
  }

  private dispatch(payload: string): void {
    const [topic, id] = payload.split(':', 2) as [CacheTopic, string];
    for (const listener of this.listeners.get(topic) ?? []) listener(id);
  }

  private dropAll(): void {
    this.logger.warn('cache listener reconnected: dropping all cached entries');
    for (const listeners of this.listeners.values()) for (const listener of listeners) listener(undefined);
  }
}
