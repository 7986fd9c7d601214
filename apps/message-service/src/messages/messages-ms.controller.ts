import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import { BusPattern, InvalidRequestError, agentOfSubject, checkAgentReply, type BusRequest } from '@mcpgw/contracts';
import { BUS_OPTIONS, BusContext, refuseOnBus, type BusOptions } from '@mcpgw/bus';
import { WaitService } from '../wait/wait.service';
import { ForeignReplyError, GATEWAY_SENDER, MessagesService, requireUuid } from './messages.service';

/**
 * The message service's bus API: one-line handlers over the services. Post,
 * post-and-wait, wait, list and create are the gateway's (only its NATS
 * credentials may publish there); agents reply and read history on subjects
 * that name them (`ms.agents.<agent>.…`), and get only their own channels.
 */
@Controller()
export class MessagesMsController {
  constructor(
    private readonly messages: MessagesService,
    private readonly waits: WaitService,
    @Inject(BUS_OPTIONS) private readonly bus: BusOptions,
  ) {}

  @MessagePattern(BusPattern.CreateChannel)
  createChannel(@Payload() req: BusRequest<typeof BusPattern.CreateChannel>) {
    return this.messages.createChannel(req.agent_id);
  }

  @MessagePattern(BusPattern.PostMessage)
  post(@Payload() req: BusRequest<typeof BusPattern.PostMessage>, @Ctx() ctx: BusContext) {
    return this.messages.post(req.envelope, GATEWAY_SENDER, ctx.ids, req.fingerprint, req.key);
  }

  @MessagePattern(BusPattern.ForgetKey)
  forgetKey(@Payload() req: BusRequest<typeof BusPattern.ForgetKey>) {
    return this.messages.forgetKey(req?.message_id);
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
  postAndWait(@Payload() req: BusRequest<typeof BusPattern.PostAndWait>, @Ctx() ctx: BusContext) {
    return this.waits.postAndWait(req.envelope, req.timeout_ms, ctx.ids, req.fingerprint, req.key);
  }

  /** An agent's reply, at any replica (a pod's retry): stored only as the reply of the agent the subject names. */
  @MessagePattern(BusPattern.StoreReply)
  async storeReply(@Payload() req: BusRequest<typeof BusPattern.StoreReply>, @Ctx() ctx: BusContext) {
    const sender = this.sender(BusPattern.StoreReply, ctx);
    const parsed = checkAgentReply(req?.envelope);
    if (!parsed.ok) throw new InvalidRequestError('invalid agent_reply', parsed.errors);
    try {
      return await this.messages.postReplyFrom(sender, parsed.value);
    } catch (error) {
      if (error instanceof ForeignReplyError)
        refuseOnBus(BusPattern.StoreReply, 'reply from another agent', error.message);
      throw error;
    }
  }

  /** The history of one of the agent's own channels. */
  @MessagePattern(BusPattern.AgentHistory)
  async history(@Payload() req: BusRequest<typeof BusPattern.AgentHistory>, @Ctx() ctx: BusContext) {
    return {
      messages: await this.messages.listFor(this.sender(BusPattern.AgentHistory, ctx), req?.channel_id, req?.limit),
    };
  }

  /** Whether a reply to a message on one of the agent's own channels is stored (a pod, before running a redelivery). */
  @MessagePattern(BusPattern.IsAnswered)
  async isAnswered(@Payload() req: BusRequest<typeof BusPattern.IsAnswered>, @Ctx() ctx: BusContext) {
    return {
      answered: await this.messages.isAnsweredFor(
        this.sender(BusPattern.IsAnswered, ctx),
        req?.channel_id,
        req?.message_id,
      ),
    };
  }

  private sender(pattern: string, ctx: BusContext): string {
    const agent = agentOfSubject(this.bus.prefix, pattern, ctx.subject);
    if (!agent) throw new InvalidRequestError('the subject names no agent');
    return agent;
  }
}
