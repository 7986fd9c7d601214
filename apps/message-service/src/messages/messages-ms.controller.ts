import { Controller } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import type { CallIds } from '@mcpgw/bus';
import { BusPattern, type BusRequest } from '@mcpgw/contracts';
import { WaitService } from '../wait/wait.service';
import { MessagesService, requireUuid } from './messages.service';

/** The message service's bus API: one-line handlers over the services. */
@Controller()
export class MessagesMsController {
  constructor(
    private readonly messages: MessagesService,
    private readonly waits: WaitService,
  ) {}

  @MessagePattern(BusPattern.CreateChannel)
  createChannel(@Payload() req: BusRequest<typeof BusPattern.CreateChannel>) {
    return this.messages.createChannel(req.agent_id);
  }

  @MessagePattern(BusPattern.PostMessage)
  post(@Payload() req: BusRequest<typeof BusPattern.PostMessage>) {
    return this.messages.post(req.envelope);
  }

  @MessagePattern(BusPattern.ListMessages)
  async list(@Payload() req: BusRequest<typeof BusPattern.ListMessages>) {
    return { messages: await this.messages.list(req.channel_id, req.limit) };
  }

  @MessagePattern(BusPattern.WaitForReply)
  wait(@Payload() req: BusRequest<typeof BusPattern.WaitForReply>) {
    return this.waits.waitForReply(
      requireUuid(req.channel_id, 'channel_id'),
      requireUuid(req.message_id, 'message_id'),
      req.timeout_ms,
    );
  }

  @MessagePattern(BusPattern.PostAndWait)
  postAndWait(@Payload() req: BusRequest<typeof BusPattern.PostAndWait>, @Ctx() ids: CallIds) {
    return this.waits.postAndWait(req.envelope, req.timeout_ms, ids);
  }
}
