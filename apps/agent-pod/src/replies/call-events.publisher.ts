import { Inject, Injectable } from '@nestjs/common';
import { CallEvents, type CallEvent } from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';
import { AGENT_POD_ENV, type AgentPodEnv } from '../config/agent-pod.env';

/**
 * Progress and log events of a message in flight, on core NATS: whoever watches
 * the call (the gateway, for a client that asked for progress) hears them;
 * nobody listening costs nothing. The reply never travels this way.
 */
@Injectable()
export class CallEventsPublisher {
  constructor(
    private readonly bus: BusClient,
    @Inject(AGENT_POD_ENV) private readonly env: AgentPodEnv,
  ) {}

  publish(event: CallEvent): void {
    this.bus.publish(CallEvents.at(this.env.AGENT_ID, event.in_reply_to), event);
  }
}
