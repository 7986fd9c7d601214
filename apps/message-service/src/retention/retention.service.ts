import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { MESSAGE_SERVICE_ENV, type MessageServiceEnv } from '../config/message-service.env';
import { ReplyNotices } from '../wait/reply-notices.service';
import { RetentionStore, type PurgeCursor, type PurgePolicy } from './retention.store';

/** What purges deleted in this process, for /metrics. */
const purged = { channels: 0, messages: 0 };

/** The Prometheus counter `mcpgw_retention_purged_total{kind}`: rows deleted by retention (channels, messages). */
export const retentionPurgedMetric = {
  name: 'mcpgw_retention_purged_total',
  help: 'Rows deleted by retention in this process: expired channels and their messages',
  labelNames: ['kind'] as const,
  read: () => Object.entries(purged).map(([kind, value]) => [{ kind }, value] as [{ kind: string }, number]),
};

export interface PurgeRun {
  /** False: another replica held the purge lock, nothing was done. */
  ran: boolean;
  batches: number;
  channels: number;
  messages: number;
}

/**
 * Retention (README.md beside this file): every RETENTION_PURGE_INTERVAL_MS, one
 * replica deletes the expired channels with their messages, in batches.
 */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(RetentionService.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;

  constructor(
    private readonly store: RetentionStore,
    private readonly notices: ReplyNotices,
    @Inject(MESSAGE_SERVICE_ENV) private readonly env: MessageServiceEnv,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), this.env.RETENTION_PURGE_INTERVAL_MS).unref();
  }

  /** Stop after the batch under way; before the pool closes (TypeORM closes it at application shutdown). */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    const run = this.purge().catch((error: Error) => this.logger.warn(`retention purge failed: ${error.message}`));
    this.running = run;
    await run;
    this.running = undefined;
  }

  /** One purge run: every expired channel, batch by batch; nothing if another replica is purging. */
  async purge(): Promise<PurgeRun> {
    const policy: PurgePolicy = {
      retentionSeconds: this.env.CHANNEL_RETENTION_SECONDS,
      singleCallRetentionSeconds: this.env.SINGLE_CALL_RETENTION_SECONDS,
      waitMaxMs: this.env.WAIT_MAX_MS,
      batch: this.env.RETENTION_PURGE_BATCH,
    };
    const run = await this.store.whileLocked(async (conn) => {
      const total: PurgeRun = { ran: true, batches: 0, channels: 0, messages: 0 };
      let cursor: PurgeCursor | undefined;
      do {
        // This replica's own open waits, on top of the rule every replica's waits are kept by.
        const keep = this.notices.waiters.pending().map((wait) => wait.channelId);
        const batch = await this.store.purgeBatch(conn, policy, cursor, keep);
        total.batches++;
        total.channels += batch.channels;
        total.messages += batch.messages;
        purged.channels += batch.channels;
        purged.messages += batch.messages;
        cursor = batch.next;
      } while (cursor && !this.stopped);
      return total;
    });
    if (run?.channels) this.logger.log(`retention: deleted ${run.channels} channel(s), ${run.messages} message(s)`);
    return run ?? { ran: false, batches: 0, channels: 0, messages: 0 };
  }
}
