import { Gauge, type Registry } from 'prom-client';

/** A refresh waits this long for more notices of the same burst (a rollout's pods registering). */
const REFRESH_DELAY_MS = 1_000;

/**
 * `mcpgw_tool_changes_pending{agent}`: tool changes waiting for an operator.
 * Read from PostgreSQL at start and after a notice that may change them (a
 * registration, a decision, a lost notification connection), never per
 * scrape: a scrape costs no statement. Every replica reports the same figures
 * (they are the database's): alert on `max by (agent)`.
 */
export class PendingChangesGauge {
  private readonly gauge: Gauge;
  private timer?: NodeJS.Timeout;

  constructor(
    registry: Registry,
    private readonly read: () => Promise<Map<string, number>>,
  ) {
    this.gauge = new Gauge({
      name: 'mcpgw_tool_changes_pending',
      help: 'tool-definition changes waiting for an operator to approve or reject them, per agent',
      labelNames: ['agent'],
      registers: [registry],
    });
  }

  /** Read again soon (once for a burst of notices). */
  refresh(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.now();
    }, REFRESH_DELAY_MS).unref();
  }

  async now(): Promise<void> {
    const pending = await this.read().catch(() => undefined);
    if (!pending) return; // the database is away: keep the last figures, read again on the next notice
    this.gauge.reset();
    for (const [agent, n] of pending) this.gauge.set({ agent }, n);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
