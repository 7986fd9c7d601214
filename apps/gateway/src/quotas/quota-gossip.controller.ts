import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { QuotaGossip, type QuotaGossipEvent } from '@mcpgw/contracts';
import { onEvent } from '@mcpgw/bus';
import { QuotaGossipService } from './quota-gossip.service';

/** Every replica's quota counts (checked by the bus first), heard by every replica. */
@Controller()
export class QuotaGossipController {
  constructor(private readonly gossip: QuotaGossipService) {}

  @EventPattern(QuotaGossip.pattern, onEvent(QuotaGossip))
  heard(@Payload() event: QuotaGossipEvent) {
    this.gossip.heard(event);
  }
}
