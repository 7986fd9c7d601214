import { Injectable, Logger } from '@nestjs/common';
import {
  BusPattern,
  ServiceError,
  type AgentReply,
  type ChatMessage,
  type ContentItem,
} from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';
import { randomUUID } from 'node:crypto';
import { ToolCatalogueService } from '../catalogue/tool-catalogue.service';
import {
  AgentTimeoutError,
  BackendUnavailableError,
  InternalCallError,
  InvalidArgumentsError,
  ToolNotFoundError,
} from './call-errors';

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
  ) {}

  async call(request: CallRequest): Promise<CallOutcome> {
    return this.execute(await this.prepare(request), request.timeoutMs);
  }

  /** Find the tool, check the arguments, write the chat_message. No I/O but the catalogue. */
  async prepare(request: CallRequest): Promise<PreparedCall> {
    const tool = (await this.catalogue.forAgent(request.agentId)).byName.get(request.tool);
    if (!tool) throw new ToolNotFoundError(request.tool);

    const args = structuredClone(request.arguments);
    const problems = tool.validate(args);
    if (problems.length) throw new InvalidArgumentsError(request.tool, problems);

    const message: ChatMessage = {
      type: 'chat_message',
      id: randomUUID(),
      channel_id: request.channelId,
      agent_id: request.agentId,
      sender: { kind: 'mcp_client', id: request.callerId },
      created_at: new Date().toISOString(),
      tool_call: { name: request.tool, arguments: args },
      ...(request.meta ? { meta: request.meta } : {}),
    };
    return { toolId: tool.id, message };
  }

  /**
   * Post the message and wait for its reply, in one bus round trip (the message
   * service registers the wait before it delivers). Posting a message again
   * (same id) never runs it twice: it joins the first posting.
   */
  async execute(prepared: PreparedCall, timeoutMs: number): Promise<CallOutcome> {
    const { message } = prepared;
    const posted = await this.onBus(() =>
      this.bus.request(BusPattern.PostAndWait, { envelope: message, timeout_ms: timeoutMs }, timeoutMs + WAIT_MARGIN_MS),
    );
    if (posted.result.status === 'timeout') throw new AgentTimeoutError(timeoutMs);

    const reply = posted.result.reply;
    return {
      toolId: prepared.toolId,
      channelId: posted.channel_id,
      messageId: message.id,
      content: reply.content as ContentItem[],
      structuredContent: reply.structured_content,
      isError: reply.is_error === true,
      reply,
    };
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
