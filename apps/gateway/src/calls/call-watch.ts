import { CallEvents, type CallEvent } from '@mcpgw/contracts';
import type { BusClient, BusSubscription } from '@mcpgw/bus';

/**
 * Watches one message in flight: the agent's progress and log events (core
 * NATS, checked by the bus), and when the agent last showed a sign of life.
 * Start it before the message is posted, stop it when the call ends.
 */
export class CallWatch {
  private readonly subscription: BusSubscription;
  private lastActivity = Date.now();

  constructor(bus: BusClient, agentId: string, messageId: string, onEvent: (event: CallEvent) => void) {
    this.subscription = bus.subscribe(CallEvents.at(agentId, messageId), ({ payload }) => {
      if (payload.in_reply_to !== messageId) return;
      this.lastActivity = Date.now();
      onEvent(payload);
    });
  }

  /** Milliseconds since the last event (or since the watch began). */
  get idleMs(): number {
    return Date.now() - this.lastActivity;
  }

  stop(): void {
    this.subscription.unsubscribe();
  }
}
