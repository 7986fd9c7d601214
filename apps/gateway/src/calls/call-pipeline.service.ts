import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  AgentCancel,
  BusPattern,
  CallInput,
  type InputResponse,
  ServiceError,
  type AgentReply,
  type BusResponse,
  type CallEvent,
  type CancelRequest,
  type ChatMessage,
  type ContentItem,
  type WaitResult,
} from '@mcpgw/contracts';
import { BusClient, BusTimeoutError } from '@mcpgw/bus';
import { randomUUID } from 'node:crypto';
import { ToolCatalogueService } from '../catalogue/tool-catalogue.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import {
  AgentTimeoutError,
  BackendUnavailableError,
  CallCancelledError,
  InternalCallError,
  InvalidArgumentsError,
  ToolNotFoundError,
} from './call-errors';
import { CallWatch } from './call-watch';

export interface CallRequest {
  agentId: string;
  /** The caller's stable id (API key id or grant task). */
  callerId: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** The conversation's channel; a new one is made when absent. */
  channelId?: string;
  timeoutMs: number;
  /** Delivery metadata for the agent, e.g. the names of the credentials the call may use. */
  meta?: Record<string, unknown>;
}

/** A checked call, ready to post: the tool and the chat_message that carries it. */
export interface PreparedCall {
  toolId: string;
  message: ChatMessage;
}

export interface ExecuteOptions {
  /**
   * Progress and log events of the agent, as they come. Watching makes the
   * timeout an idle timeout: each event restarts it (see mcp/README.md).
   */
  onEvent?: (event: CallEvent) => void;
  /** Aborted when the client cancels: the agent is told to stop, the call ends with CallCancelledError. */
  signal?: AbortSignal;
  /**
   * False when this request only joins a message another request posted (an
   * idempotent retry): cancelling it stops this wait, never the agent.
   */
  ownsMessage?: boolean;
}

export interface CallOutcome {
  toolId: string;
  channelId: string;
  messageId: string;
  content: ContentItem[];
  structuredContent?: Record<string, unknown>;
  isError: boolean;
  reply: AgentReply;
}

/** Extra time the bus request for a wait gets beyond the wait itself. */
const WAIT_MARGIN_MS = 5_000;

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
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  async call(request: CallRequest, options: ExecuteOptions = {}): Promise<CallOutcome> {
    return this.execute(await this.prepare(request), request.timeoutMs, options);
  }

  /**
   * resources/read or prompts/get: the same round trip as a tool call (a
   * chat_message, the agent's reply); the agent answers in structured content.
   */
  async ask(
    request: Pick<CallRequest, 'agentId' | 'callerId' | 'channelId' | 'timeoutMs'>,
    body: Pick<ChatMessage, 'resource_read' | 'prompt_get'>,
    options: ExecuteOptions = {},
  ): Promise<AgentReply> {
    const message = chatMessage(request, body);
    return (await this.execute({ toolId: '', message }, request.timeoutMs, options)).reply;
  }

  /** Find the tool, check the arguments, write the chat_message. No I/O but the catalogue. */
  async prepare(request: CallRequest): Promise<PreparedCall> {
    const tool = (await this.catalogue.forAgent(request.agentId)).byName.get(request.tool);
    if (!tool) throw new ToolNotFoundError(request.tool);

    const args = structuredClone(request.arguments);
    const problems = tool.validate(args);
    if (problems.length) throw new InvalidArgumentsError(request.tool, problems);

    const message = chatMessage(request, {
      tool_call: { name: request.tool, arguments: args },
      ...(request.meta ? { meta: request.meta } : {}),
    });
    return { toolId: tool.id, message };
  }

  /**
   * Post the message and wait for its reply, in one bus round trip (the message
   * service registers the wait before it delivers). Posting a message again
   * (same id) never runs it twice: it joins the first posting.
   */
  async execute(prepared: PreparedCall, timeoutMs: number, options: ExecuteOptions = {}): Promise<CallOutcome> {
    const { message } = prepared;
    const { signal, onEvent } = options;
    if (signal?.aborted) throw new CallCancelledError();
    const startedAt = Date.now();
    const watch = onEvent && new CallWatch(this.bus, message.id, onEvent);
    const cancelAgent = () => {
      if (options.ownsMessage !== false) this.cancelAgent(message, 'cancelled by the client');
    };
    signal?.addEventListener('abort', cancelAgent, { once: true });
    try {
      const posted = await this.unlessCancelled(signal, () => this.postAndWait(message, timeoutMs));
      const result = watch
        ? await this.waitWhileAlive(posted.result, posted.channel_id, message.id, timeoutMs, startedAt, watch, signal)
        : posted.result;
      if (result.status === 'timeout') throw new AgentTimeoutError(timeoutMs);
      const reply = result.reply;
      return {
        toolId: prepared.toolId,
        channelId: posted.channel_id,
        messageId: message.id,
        content: reply.content as ContentItem[],
        structuredContent: reply.structured_content,
        isError: reply.is_error === true,
        reply,
      };
    } finally {
      signal?.removeEventListener('abort', cancelAgent);
      watch?.stop();
    }
  }

  /**
   * Post the message and wait for its reply, in slices of CALL_WAIT_SLICE_MS.
   * The replica holding the wait answers at the end of each slice; if it does
   * not (it died), the message is posted again: posting is idempotent, so any
   * replica joins the first posting (or, if it never got stored, stores it) and
   * the reply reaches it however the pod delivers it.
   */
  private async postAndWait(
    message: ChatMessage,
    timeoutMs: number,
  ): Promise<BusResponse<typeof BusPattern.PostAndWait>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const slice = Math.max(0, Math.min(deadline - Date.now(), this.env.CALL_WAIT_SLICE_MS));
      try {
        const posted = await this.bus.request(
          BusPattern.PostAndWait,
          { envelope: message, timeout_ms: slice },
          slice + WAIT_MARGIN_MS,
        );
        if (posted.result.status === 'replied' || Date.now() >= deadline) return posted;
      } catch (error) {
        if (!(error instanceof BusTimeoutError) || Date.now() >= deadline) throw error;
        this.logger.warn({
          msg: 'no answer from the message service replica holding the wait; posting again',
          message_id: message.id,
        });
      }
    }
  }

  /**
   * While the agent keeps sending events, a timeout is not the end: wait again
   * for the time left since its last event, up to CALL_TIMEOUT_MAX_MS in all.
   */
  private async waitWhileAlive(
    first: WaitResult,
    channelId: string,
    messageId: string,
    timeoutMs: number,
    startedAt: number,
    watch: CallWatch,
    signal?: AbortSignal,
  ): Promise<WaitResult> {
    const hardStop = startedAt + this.env.CALL_TIMEOUT_MAX_MS;
    let result = first;
    while (result.status === 'timeout' && watch.idleMs < timeoutMs && Date.now() < hardStop) {
      const wait = Math.min(timeoutMs - watch.idleMs, hardStop - Date.now());
      result = await this.unlessCancelled(signal, () =>
        this.bus.request(
          BusPattern.WaitForReply,
          { channel_id: channelId, message_id: messageId, timeout_ms: wait },
          wait + WAIT_MARGIN_MS,
        ),
      );
    }
    return result;
  }

  /** A bus step, unless the client cancels first (then CallCancelledError at once). */
  private unlessCancelled<T>(signal: AbortSignal | undefined, step: () => Promise<T>): Promise<T> {
    const work = this.onBus(step);
    if (!signal) return work;
    return new Promise<T>((resolve, reject) => {
      const abort = () => reject(new CallCancelledError());
      if (signal.aborted) return abort();
      signal.addEventListener('abort', abort, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
    });
  }

  /** A client's answer to an agent's input request, to whichever pod runs the message. */
  answerInput(messageId: string, response: InputResponse): void {
    this.bus.publish(CallInput.at(messageId), response);
  }

  /** Tell every pod of the agent to stop working on the message (the one running it will). */
  private cancelAgent(message: ChatMessage, reason: string): void {
    const cancel: CancelRequest = { type: 'cancel', message_id: message.id, reason };
    this.bus.publish(AgentCancel.at(message.agent_id), cancel);
  }

  /** Bus failures become typed call errors; anything unexpected is logged once, here. */
  private async onBus<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'unavailable') {
        throw new BackendUnavailableError(error.message);
      }
      this.logger.error({ msg: 'bus step failed', error: (error as Error).message });
      throw new InternalCallError((error as Error).message);
    }
  }
}

/** A new chat_message from an MCP client, on the conversation's channel (or a new one). */
function chatMessage(
  request: Pick<CallRequest, 'agentId' | 'callerId' | 'channelId'>,
  body: Pick<ChatMessage, 'tool_call' | 'resource_read' | 'prompt_get' | 'meta'>,
): ChatMessage {
  return {
    type: 'chat_message',
    id: randomUUID(),
    channel_id: request.channelId,
    agent_id: request.agentId,
    sender: { kind: 'mcp_client', id: request.callerId },
    created_at: new Date().toISOString(),
    ...body,
  };
}
