import { CallEvents, type CallEvent } from '@mcpgw/contracts';
import type { BusClient } from '@mcpgw/bus/core';

/**
 * Progress, log and input-request events of a message in flight, on core NATS:
 * whoever watches the call (the gateway, for a client that asked for progress)
 * hears them; nobody listening costs nothing. The reply never travels this way.
 */
export class CallEventsPublisher {
  constructor(
    private readonly bus: BusClient,
    private readonly agentId: string,
  ) {}

  publish(event: CallEvent): void {
    this.bus.publish(CallEvents.at(this.agentId, event.in_reply_to), event);
  }
}
