import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ServiceTokenGuard } from '../messages/service-token.guard';
import { ConversationsService } from './conversations.service';

/** The REST mirror of the operator's views (the service token, like the rest of the mirror). */
@Controller()
@UseGuards(ServiceTokenGuard)
export class ConversationsHttpController {
  constructor(private readonly conversations: ConversationsService) {}

  @Get('calls')
  listCalls(@Query() query: Record<string, unknown>) {
    return this.conversations.listCalls(query);
  }

  @Get('calls/:callId')
  async findCall(@Param('callId') callId: string) {
    return { calls: await this.conversations.findCall(callId) };
  }

  @Get('channels')
  listChannels(@Query() query: Record<string, unknown>) {
    return this.conversations.listChannels(query);
  }

  @Get('channels/:id/calls')
  showChannel(@Param('id') channelId: string, @Query() query: Record<string, unknown>) {
    return this.conversations.showChannel({ ...query, channel_id: channelId });
  }
}
