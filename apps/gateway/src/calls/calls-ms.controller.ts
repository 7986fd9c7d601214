import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { BusEvent } from '@mcpgw/contracts';
import type { BusHandlerExtras } from '@mcpgw/bus';
import { InFlightCalls } from './in-flight-calls.service';

const fanout: BusHandlerExtras = { fanout: true };

/** Cancels heard on the bus: the replica running the call stops it. */
@Controller()
export class CallsMsController {
  constructor(private readonly inFlight: InFlightCalls) {}

  @EventPattern(BusEvent.CallCancelled, fanout)
  cancelled(@Payload() event: { key?: unknown }) {
    if (typeof event?.key === 'string') this.inFlight.cancel(event.key);
  }
}
