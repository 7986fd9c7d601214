import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { BusPattern, type BusRequest } from '@mcpgw/contracts';
import { ConversationsService } from './conversations.service';

/** The operator's views on the bus: gateway-only subjects (BUS_ACCESS), one-line handlers. */
@Controller()
export class ConversationsMsController {
  constructor(private readonly conversations: ConversationsService) {}

  @MessagePattern(BusPattern.FindCall)
  async findCall(@Payload() req: BusRequest<typeof BusPattern.FindCall>) {
    return { calls: await this.conversations.findCall(req?.call_id) };
  }

  @MessagePattern(BusPattern.ListCalls)
  listCalls(@Payload() req: BusRequest<typeof BusPattern.ListCalls>) {
    return this.conversations.listCalls(asRecord(req));
  }

  @MessagePattern(BusPattern.ListChannels)
  listChannels(@Payload() req: BusRequest<typeof BusPattern.ListChannels>) {
    return this.conversations.listChannels(asRecord(req));
  }

  @MessagePattern(BusPattern.ShowChannel)
  showChannel(@Payload() req: BusRequest<typeof BusPattern.ShowChannel>) {
    return this.conversations.showChannel(asRecord(req));
  }
}

/** A payload as fields to check (anything but an object has none). */
export function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
