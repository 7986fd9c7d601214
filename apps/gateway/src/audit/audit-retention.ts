import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Draining } from '@mcpgw/runtime';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { AuditStore } from './audit.store';

const EVERY_MS = 3_600_000;

/**
 * Retention: at start and then every hour, the chains of days older than
 * AUDIT_RETENTION_DAYS are dropped whole by the database function (their
 * anchors kept, marked dropped). At start too, so that a replica restarted more
 * often than hourly (a rollout, a scale-down) still drops them. Every replica
 * runs it; it is idempotent. Not in the admin CLI (which has no `Draining`).
 */
@Injectable()
export class AuditRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Audit');
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly store: AuditStore,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    @Optional() private readonly draining?: Draining,
  ) {}

  onApplicationBootstrap(): void {
    if (this.env.AUDIT === 'off' || !this.draining) return;
    void this.run();
    this.timer = setInterval(() => void this.run(), EVERY_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Drop what is past retention now: how many rows went. */
  async run(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.env.AUDIT_RETENTION_DAYS * 86_400_000).toISOString().slice(0, 10);
    try {
      const dropped = await this.store.dropChainsBefore(cutoff);
      if (dropped) this.logger.log({ msg: 'audit chains past retention dropped', before: cutoff, rows: dropped });
      return dropped;
    } catch (error) {
      this.logger.warn({ msg: 'audit retention failed', error: (error as Error).message });
      return 0;
    }
  }
}
