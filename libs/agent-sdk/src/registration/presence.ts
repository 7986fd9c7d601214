import { AgentPresence } from '@mcpgw/contracts';
import type { BusClient } from '@mcpgw/bus/core';
import type { AgentLogger } from '../logger';

/**
 * The pod's heartbeat (`agents.<agent>.presence`): `up` at start and every
 * `intervalMs`, so that the gateway counts the pod online (seen within 3
 * intervals); `leaving` once when it drains, so that it is offline at once.
 * Fire-and-forget: a beat lost is made up by the next.
 */
export class Presence {
  private timer?: NodeJS.Timeout;
  private left = false;

  constructor(
    private readonly bus: BusClient,
    private readonly identity: { agentId: string; podId: string },
    private readonly intervalMs: number,
    private readonly logger: AgentLogger,
  ) {}

  start(): void {
    if (this.timer || this.left) return;
    this.send('up');
    this.timer = setInterval(() => this.send('up'), this.intervalMs);
    this.timer.unref();
  }

  /** Say `leaving` (once) and beat no more. */
  leave(): void {
    if (this.left) return;
    this.left = true;
    clearInterval(this.timer);
    if (this.timer) this.send('leaving');
    this.timer = undefined;
  }

  private send(state: 'up' | 'leaving'): void {
    try {
      this.bus.publish(AgentPresence.at(this.identity.agentId), {
        pod_id: this.identity.podId,
        state,
        interval_ms: this.intervalMs,
      });
    } catch (error) {
      // A closed connection: the gateway sees the pod go offline after 3 intervals.
      this.logger.warn({ msg: 'presence not sent', state, error: (error as Error).message });
    }
  }
}
