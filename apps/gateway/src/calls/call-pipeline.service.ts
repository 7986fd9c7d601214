import { Inject, Injectable } from '@nestjs/common';
import {
  BusPattern,
  CallInput,
  callIdOf,
  type InputResponse,
  withCallBudget,
  type AgentReply,
  type CallEvent,
  type ChatMessage,
  type ContentItem,
  UNSTORABLE_TEXT_REFUSAL,
  holdsUnstorableText,
} from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';
import { CallCancellation } from '../cancellation/call-cancellation.service';
import { ToolCatalogueService } from '../catalogue/tool-catalogue.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { AttachmentResolver, withoutAttachments } from '../files/attachments';
import { CallTime } from '../timeouts/call-time';
import { AgentTimeoutError, InvalidArgumentsError, ToolNotFoundError } from './call-errors';
import { detachable, whenDetached } from './detach';
import { CallWatch } from './call-watch';
import { onBus } from './bus-steps';
import { ReplyWaits } from './reply-waits.service';
import { callIdFor, chatMessage, postingKeyOf } from './chat-messages';
import {
  NO_TOOL_ID,
  type AskRequest,
  type CallOutcome,
  type CallRef,
  type CallRequest,
  type ConversationalContent,
  type ExecuteOptions,
  type PreparedCall,
} from './call-shapes';

/** How a conversational message is named where a tool's name would be (its errors). */
const CONVERSATION = 'message';

/**
 * One tools/call, surface-independent: find the tool, check the arguments,
 * post a chat_message, wait for its agent_reply. Reads top to bottom; every
 * failure leaves as a CallError.
 */
@Injectable()
export class CallPipeline {
  constructor(
    private readonly catalogue: ToolCatalogueService,
    private readonly bus: BusClient,
    private readonly cancellation: CallCancellation,
    private readonly attachments: AttachmentResolver,
    private readonly waits: ReplyWaits,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  async call(request: CallRequest, options: ExecuteOptions = {}): Promise<CallOutcome> {
    return this.execute(await this.prepare(request), request.time, options);
  }

  /**
   * resources/read, prompts/get or completion/complete: the same round trip as a tool call (a
   * chat_message, the agent's reply); the agent answers in structured content.
   */
  async ask(
    request: AskRequest,
    body: Pick<ChatMessage, 'resource_read' | 'prompt_get' | 'complete'>,
    options: ExecuteOptions = {},
  ): Promise<AgentReply> {
    const message = chatMessage(request, body);
    const time = CallTime.of(request.timeoutMs, this.env);
    return (await this.execute({ toolId: '', message }, time, options)).reply;
  }

  /**
   * Find the tool, check the arguments, resolve the attachments, write the
   * chat_message. No I/O but the catalogue and, for attachments, the files' rows.
   */
  async prepare(request: CallRequest): Promise<PreparedCall> {
    if (request.said) return this.prepareConversational(request, request.said);
    const tool = (await this.catalogue.forAgent(request.agentId, request.time.deadline)).byName.get(request.tool);
    if (!tool) throw new ToolNotFoundError(request.tool);

    const given = structuredClone(request.arguments);
    // `attachments` is the gateway's, on every tool (checked by its own schema, files/attachments.ts):
    // a tool that does not declare it is validated, and called, without it.
    const args = withoutAttachments(given, tool.definition);
    const problems = tool.validate(args);
    if (problems.length) throw new InvalidArgumentsError(request.tool, problems);
    // PostgreSQL's jsonb cannot hold U+0000 or a lone surrogate: stored, it would fail the whole group commit it joins.
    if (holdsUnstorableText(args))
      throw new InvalidArgumentsError(request.tool, [`arguments: ${UNSTORABLE_TEXT_REFUSAL}`]);
    // Files of this agent and caller only, uploaded and unexpired: else nothing is posted (files/README.md).
    const attached = await this.attachments.resolve(given, request.agentId, request.callerId, request.time.deadline);
    if (!attached.ok) throw new InvalidArgumentsError(request.tool, attached.problems);

    const message = chatMessage(request, {
      tool_call: { name: request.tool, arguments: args },
      call_id: request.callId,
      ...(attached.parts.length ? { attachments: attached.parts } : {}),
      ...(request.meta ? { meta: request.meta } : {}),
    });
    return { toolId: tool.id, message, requestId: request.requestId };
  }

  /**
   * A conversational message: no tool to find or schema to check (whether the
   * agent answers such messages is the surface's to ask first: the catalogue's
   * `conversation`); the same storable-text rule and attachments as a call.
   */
  private async prepareConversational(request: CallRequest, said: ConversationalContent): Promise<PreparedCall> {
    if (holdsUnstorableText(said) || holdsUnstorableText(request.arguments))
      throw new InvalidArgumentsError(CONVERSATION, [`message: ${UNSTORABLE_TEXT_REFUSAL}`]);
    const attached = await this.attachments.resolve(
      request.arguments,
      request.agentId,
      request.callerId,
      request.time.deadline,
    );
    if (!attached.ok) throw new InvalidArgumentsError(CONVERSATION, attached.problems);
    const message = chatMessage(request, {
      text: said.text,
      ...(said.data && { data: said.data }),
      call_id: request.callId,
      ...(attached.parts.length ? { attachments: attached.parts } : {}),
      ...(request.meta ? { meta: request.meta } : {}),
    });
    return { toolId: NO_TOOL_ID, message, requestId: request.requestId };
  }

  /**
   * Post the message and wait for its reply, in one bus round trip (the message
   * service registers the wait before it delivers). Posting a message again
   * (same id) never runs it twice: it joins the first posting. Every wait is
   * derived from `time` (timeouts/README.md); cancellation is the
   * cancellation module's (cancellation/README.md).
   */
  async execute(prepared: PreparedCall, time: CallTime, options: ExecuteOptions = {}): Promise<CallOutcome> {
    const { message, requestId, idempotency } = prepared;
    const { signal, onEvent } = options;
    const callId = callIdFor(message);
    options.onMessage?.({ messageId: message.id, callId });
    const call = this.cancellation.watch(message, signal, options.ownsMessage !== false);
    const watch = onEvent && new CallWatch(this.bus, message.agent_id, message.id, onEvent);
    const agentDeadline = time.agentDeadline({ watched: !!watch, keepsResult: options.keepsResult === true });
    const detached = whenDetached(options.detach);
    try {
      const posted = await detachable(
        call.unlessCancelled(
          onBus(
            () => this.waits.postAndWait(message, time, agentDeadline, requestId, detached, idempotency),
            idempotency,
          ),
        ),
        options.detach,
      );
      // Joined by its key, the call is the posting that holds it, under its own ids and time.
      const posting = posted.posting;
      const messageId = posting?.id ?? message.id;
      const result = watch
        ? await detachable(
            this.waits.waitWhileAlive(posted.result, posted.channel_id, messageId, time, watch, call, detached),
            options.detach,
          )
        : posted.result;
      if (result.status === 'timeout') throw new AgentTimeoutError(time.timeoutMs);
      const reply = result.reply;
      return {
        toolId: prepared.toolId,
        channelId: posted.channel_id,
        messageId,
        callId: posting ? (posting.call_id ?? callIdOf(posting.id)) : callId,
        postedAt: posting?.created_at ?? message.created_at,
        joined: !posted.storedHere,
        content: reply.content as ContentItem[],
        structuredContent: reply.structured_content,
        isError: reply.is_error === true,
        reply,
      };
    } finally {
      call.end();
      watch?.stop();
    }
  }

  /**
   * Continue a call already in flight (an MRTR retry, on any replica): watch
   * its events, then `started` (which answers the agent's questions, so no
   * new one is missed), then wait for its reply as a watched call does. The
   * agent's own deadline was fixed when the call was first posted.
   */
  async resume(
    ref: CallRef,
    time: CallTime,
    options: ExecuteOptions & { onEvent: (event: CallEvent) => void; started: () => void },
  ): Promise<CallOutcome> {
    const owner = { id: ref.messageId, agent_id: ref.agentId } as ChatMessage;
    const call = this.cancellation.watch(owner, options.signal, options.ownsMessage !== false);
    const watch = new CallWatch(this.bus, ref.agentId, ref.messageId, options.onEvent);
    const detached = whenDetached(options.detach);
    try {
      options.started();
      const result = await detachable(
        this.waits.waitWhileAlive({ status: 'timeout' }, ref.channelId, ref.messageId, time, watch, call, detached),
        options.detach,
      );
      if (result.status === 'timeout') throw new AgentTimeoutError(time.timeoutMs);
      const reply = result.reply;
      return {
        toolId: '',
        channelId: ref.channelId,
        messageId: ref.messageId,
        // Only surface A continues calls (MRTR), and its call ids are the gateway's.
        callId: callIdOf(ref.messageId),
        content: reply.content as ContentItem[],
        structuredContent: reply.structured_content,
        isError: reply.is_error === true,
        reply,
      };
    } finally {
      call.end();
      watch.stop();
    }
  }

  /**
   * Post a prepared call and do not wait for its reply (a 2025-11-25 task:
   * `../tasks/`): stored and delivered like any call, with the agent's budget
   * up to the call's limit. Answers where the reply will be.
   */
  async post(prepared: PreparedCall, time: CallTime): Promise<CallRef> {
    const { message, requestId, idempotency } = prepared;
    const agentDeadline = time.agentDeadline({ watched: true, keepsResult: false });
    const fingerprint = idempotency?.fingerprint.toString('hex');
    const envelope = withCallBudget(message, agentDeadline);
    const posted = await onBus(
      () =>
        this.bus.request(
          BusPattern.PostMessage,
          { envelope, fingerprint, key: postingKeyOf(idempotency, this.env.IDEMPOTENCY_TTL_SECONDS) },
          undefined,
          { requestId },
        ),
      idempotency,
    );
    return { agentId: message.agent_id, channelId: posted.channel_id, messageId: posted.posting?.id ?? message.id };
  }

  /** A client's answer to an agent's input request, to whichever pod runs the message. */
  answerInput(agentId: string, messageId: string, response: InputResponse): void {
    this.bus.publish(CallInput.at(agentId, messageId), response);
  }

  /** Ask the agent to publish again the questions of this call it still waits on (a task taken over, which may have missed them). */
  askAgain(agentId: string, messageId: string): void {
    this.bus.publish(CallInput.at(agentId, messageId), { key: '', resend: true });
  }
}
