import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { CallCancelled, type CallCancelledEvent } from '@mcpgw/contracts';
import { onEvent } from '@mcpgw/bus';
import { InFlightCalls } from './in-flight-calls.service';

/** Cancels heard on the bus (checked by the bus first): the replica running the call stops it; the others ignore it. */
@Controller()
export class CallCancelledController {
  constructor(private readonly inFlight: InFlightCalls) {}

  @EventPattern(CallCancelled.pattern, onEvent(CallCancelled))
  cancelled(@Payload() event: CallCancelledEvent) {
    this.inFlight.cancel(event.key);
  }
}
