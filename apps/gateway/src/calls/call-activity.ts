import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ACTIVITY_MAX_CALLS, GatewayActivity, type ActivityEvent, type CallActivity } from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';

/** How long ended calls are gathered before they are told, in one message. */
export const ACTIVITY_INTERVAL_MS = 1_000;

/** Outcomes that are not errors (the overview's error count is the rest). */
const FINE = new Set(['ok', 'replayed']);

/**
 * Tells the live consoles (`gateway.activity`, admin-api/live/README.md) which
 * calls ended on this replica: gathered for up to ACTIVITY_INTERVAL_MS and
 * sent as one message (the first ACTIVITY_MAX_CALLS listed, the rest counted),
 * so the bus carries one more message per busy replica per second, never one
 * per call (call-budget.e2e holds it). An idle replica sends nothing.
 */
@Injectable()
export class CallActivityBatcher implements OnApplicationShutdown {
  private readonly logger = new Logger(CallActivityBatcher.name);
  private calls: CallActivity[] = [];
  private unlisted = { calls: 0, errors: 0 };
  private timer?: NodeJS.Timeout;

  constructor(private readonly bus: BusClient) {}

  ended(call: CallActivity): void {
    if (this.calls.length < ACTIVITY_MAX_CALLS) this.calls.push(call);
    else {
      this.unlisted.calls++;
      if (!FINE.has(call.outcome)) this.unlisted.errors++;
    }
    this.timer ??= setTimeout(() => this.flush(), ACTIVITY_INTERVAL_MS).unref();
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const calls = this.calls;
    const unlisted = this.unlisted;
    if (!calls.length && !unlisted.calls) return;
    this.calls = [];
    this.unlisted = { calls: 0, errors: 0 };
    const told: ActivityEvent = { kind: 'calls', calls, unlisted };
    try {
      this.bus.publish(GatewayActivity, told);
    } catch (error) {
      // The bus may be closing (a drain): no call's answer depends on this.
      this.logger.debug({ msg: 'activity not published', error: (error as Error).message });
    }
  }

  onApplicationShutdown(): void {
    this.flush();
  }
}
