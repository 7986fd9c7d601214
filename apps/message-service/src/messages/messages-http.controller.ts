import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { HTTP_WAIT_DEFAULT_MS } from '../wait/wait-deadline';
import { WaitService } from '../wait/wait.service';
import { MessagesService, requireUuid } from './messages.service';
import { ServiceTokenGuard } from './service-token.guard';

/** The REST mirror of the bus API, for operators and tools that speak HTTP; it needs the service token. */
@Controller()
@UseGuards(ServiceTokenGuard)
export class MessagesHttpController {
  constructor(
    private readonly messages: MessagesService,
    private readonly waits: WaitService,
  ) {}

  @Post('channels')
  createChannel(@Body() body: { agent_id?: unknown }) {
    return this.messages.createChannel(body?.agent_id);
  }

  @Post('channels/:id/messages')
  post(@Param('id') channelId: string, @Body() body: Record<string, unknown>) {
    return this.messages.post({ ...body, channel_id: requireUuid(channelId, 'channel id') }, 'rest');
  }

  @Get('channels/:id/messages')
  async list(@Param('id') channelId: string, @Query('limit') limit?: string) {
    return { messages: await this.messages.list(channelId, limit ?? 100) };
  }

  @Post('channels/:id/wait')
  @HttpCode(200)
  wait(@Param('id') channelId: string, @Body() body: { message_id?: unknown; timeout_ms?: unknown }) {
    return this.waits.waitForReply(
      requireUuid(channelId, 'channel id'),
      requireUuid(body?.message_id, 'message_id'),
      body?.timeout_ms ?? HTTP_WAIT_DEFAULT_MS,
    );
  }
}
