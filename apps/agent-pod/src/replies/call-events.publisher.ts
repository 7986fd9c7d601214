import { Inject, Injectable } from '@nestjs/common';
import { CallEvents, type CallEvent } from '@mcpgw/contracts';
import { BUS_OPTIONS, NATS_CONNECTION, encodeJson, type BusOptions } from '@mcpgw/bus';
import type { NatsConnection } from 'nats';

/**
 * Progress and log events of a message in flight, on core NATS: whoever watches
 * the call (the gateway, for a client that asked for progress) hears them;
 * nobody listening costs nothing. The reply never travels this way.
 */
@Injectable()
export class CallEventsPublisher {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_OPTIONS) private readonly bus: BusOptions,
  ) {}

  publish(event: CallEvent): void {
    this.nc.publish(CallEvents.subject(this.bus.prefix, event.in_reply_to), encodeJson(event));
  }
}
