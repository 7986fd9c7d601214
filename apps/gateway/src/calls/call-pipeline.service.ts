import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  BusPattern,
  CallInput,
  callIdOf,
  type InputResponse,
  ServiceError,
  isDatabaseUnavailable,
  isKeyReused,
  isReplicaDraining,
  waitRequestTimeout,
  withCallBudget,
  type AgentReply,
  type BusResponse,
  type CallEvent,
  type ChatMessage,
  type ContentItem,
  type Deadline,
  type WaitResult,
  UNSTORABLE_TEXT_REFUSAL,
  holdsUnstorableText,
} from '@mcpgw/contracts';
import { BusClient, BusTimeoutError } from '@mcpgw/bus';
import { METRICS_REGISTRY, hopTimer } from '@mcpgw/observability';
import type { Registry } from 'prom-client';
import { setTimeout as delay } from 'node:timers/promises';
import { CallCancellation, type CancellableCall } from '../cancellation/call-cancellation.service';
import { ToolCatalogueService } from '../catalogue/tool-catalogue.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { AttachmentResolver, withoutAttachments } from '../files/attachments';
import { CallTime } from '../timeouts/call-time';
import {
  AgentTimeoutError,
  BackendUnavailableError,
  CallError,
  IdempotencyKeyReusedError,
  InternalCallError,
  InvalidArgumentsError,
  ToolNotFoundError,
  ConversationGoneError,
} from './call-errors';
import { detachable, whenDetached } from './detach';
import { CallWatch } from './call-watch';
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
  private readonly logger = new Logger(CallPipeline.name);

  constructor(
    private readonly catalogue: ToolCatalogueService,
    private readonly bus: BusClient,
    private readonly cancellation: CallCancellation,
    private readonly attachments: AttachmentResolver,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.hop = hopTimer(registry, 'gateway');
  }

  /** Times hop `gateway` (/metrics): post and wait until the reply is in hand. */
  private readonly hop: () => () => void;

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
    const tool = (await this.catalogue.forAgent(request.agentId)).byName.get(request.tool);
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
    const attached = await this.attachments.resolve(given, request.agentId, request.callerId);
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
    const attached = await this.attachments.resolve(request.arguments, request.agentId, request.callerId);
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
          this.onBus(
            () => this.postAndWait(message, time, agentDeadline, requestId, detached, idempotency),
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
            this.waitWhileAlive(posted.result, posted.channel_id, messageId, time, watch, call, detached),
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
   * Post the message and wait for its reply, in slices of CALL_WAIT_SLICE_MS.
   * The replica holding the wait answers at the end of each slice; if it does
   * not (it died), the message is posted again: posting is idempotent, so any
   * replica joins the first posting (or, if it never got stored, stores it) and
   * the reply reaches it however the pod delivers it. A replica that shuts
   * down gives its waits back at once (ReplicaDrainingError): posted again the
   * same way, with no slice lost. A replica whose database is away holds the
   * post while it can and then says so (`database_unavailable`): posted again
   * after a pause, until the call's deadline, which then ends it as a timeout
   * (issue 45: an outage costs callers time, not errors). Each posting carries
   * the time the agent has left (`meta.timeout_ms`).
   */
  private async postAndWait(
    message: ChatMessage,
    time: CallTime,
    agentDeadline: Deadline,
    requestId: string | undefined,
    detached: () => boolean,
    idempotency: PreparedCall['idempotency'],
  ): Promise<BusResponse<typeof BusPattern.PostAndWait> & { storedHere: boolean }> {
    const hopDone = this.hop();
    const fingerprint = idempotency?.fingerprint.toString('hex');
    const key = postingKeyOf(idempotency, this.env.IDEMPOTENCY_TTL_SECONDS);
    // Whether a post of this request stored the message: its later posts (each wait slice, a
    // hand-back, an outage) are duplicates of its own, not a join of another request's.
    let storedHere = false;
    for (let handedBack = 0, databaseAway = 0; ;) {
      const waitMs = time.nextWaitMs(this.env.CALL_WAIT_SLICE_MS);
      try {
        const posted = await this.bus.request(
          BusPattern.PostAndWait,
          // `fingerprint` and `key` undefined for an unkeyed call: JSON leaves them out.
          { envelope: withCallBudget(message, agentDeadline), timeout_ms: waitMs, fingerprint, key },
          waitRequestTimeout(waitMs),
          { requestId },
        );
        storedHere ||= !posted.duplicate;
        if (posted.result.status === 'replied') hopDone();
        if (posted.result.status === 'replied' || time.deadline.expired || detached()) return { ...posted, storedHere };
      } catch (error) {
        const draining = isReplicaDraining(error);
        const outage = isDatabaseUnavailable(error);
        const again = error instanceof BusTimeoutError || draining || outage;
        if (again && time.deadline.expired) throw new AgentTimeoutError(time.timeoutMs);
        if (!again || detached()) throw error;
        if (draining) await this.afterHandBack(++handedBack, message.id);
        else if (outage) await delay(Math.min(100 * ++databaseAway, 1_000, time.deadline.remainingMs()));
        else
          this.logger.warn({
            msg: 'no answer from the message service replica holding the wait; posting again',
            message_id: message.id,
          });
      }
    }
  }

  /**
   * A draining replica gave the wait back: ask again at once (another replica
   * takes it). Should the same wait be handed back again and again (every
   * replica draining), pause a little between tries instead of spinning.
   */
  private async afterHandBack(times: number, messageId: string): Promise<void> {
    this.logger.log({
      msg: 'the message service replica holding the wait is draining; waiting again',
      message_id: messageId,
    });
    if (times > 1) await delay(Math.min(50 * times, 1_000));
  }

  /**
   * While the agent keeps sending events, a timeout is not the end: wait again
   * for the time left since its last event, up to the call's limit
   * (CALL_TIMEOUT_MAX_MS from acceptance).
   */
  private async waitWhileAlive(
    first: WaitResult,
    channelId: string,
    messageId: string,
    time: CallTime,
    watch: CallWatch,
    call: CancellableCall,
    detached: () => boolean,
  ): Promise<WaitResult> {
    let result = first;
    for (
      let waitMs = time.waitWhileAliveMs(watch.idleMs), handedBack = 0;
      result.status === 'timeout' && waitMs > 0 && !detached();
    ) {
      result = await call.unlessCancelled(
        this.onBus(async () => {
          try {
            return await this.bus.request(
              BusPattern.WaitForReply,
              { channel_id: channelId, message_id: messageId, timeout_ms: waitMs },
              waitRequestTimeout(waitMs),
            );
          } catch (error) {
            // Given back by a draining replica: still a timeout so far; wait again elsewhere.
            if (!isReplicaDraining(error)) throw error;
            await this.afterHandBack(++handedBack, messageId);
            return { status: 'timeout' } as const;
          }
        }),
      );
      waitMs = time.waitWhileAliveMs(watch.idleMs);
    }
    return result;
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
        this.waitWhileAlive({ status: 'timeout' }, ref.channelId, ref.messageId, time, watch, call, detached),
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
    const posted = await this.onBus(
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

  /**
   * Bus failures become typed call errors; anything unexpected is logged once, here. A keyed
   * posting refused for its fingerprint is the key's reuse.
   */
  private async onBus<T>(step: () => Promise<T>, idempotency?: PreparedCall['idempotency']): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof CallError) throw error;
      if (idempotency && isKeyReused(error)) throw new IdempotencyKeyReusedError(idempotency.key);
      if (error instanceof ServiceError && error.code === 'unavailable') {
        throw new BackendUnavailableError(error.message);
      }
      // Posting names a channel only the conversation gave: not found, it was deleted by retention.
      if (error instanceof ServiceError && error.code === 'not_found') throw new ConversationGoneError();
      this.logger.error({ msg: 'bus step failed', error: (error as Error).message });
      throw new InternalCallError((error as Error).message);
    }
  }
}
