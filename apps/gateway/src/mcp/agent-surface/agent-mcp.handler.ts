import { Inject, Injectable } from '@nestjs/common';
import { CallCancelled, LOG_LEVELS, type LogLevel } from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';
import type { ApiKeyPrincipal } from '../../auth/api-key-authenticator.service';
import { CallCancelledError } from '../../calls/call-errors';
import { CallPipeline, type CallOutcome, type CallRequest, type ExecuteOptions } from '../../calls/call-pipeline.service';
import { CallRunner } from '../../calls/call-runner.service';
import { callTimeout } from '../../calls/call-timeout';
import { InFlightCalls } from '../../calls/in-flight-calls.service';
import { ToolCatalogueService } from '../../catalogue/tool-catalogue.service';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import { takeIdempotencyKey } from '../../idempotency/idempotency-key';
import { REPLAYED_HEADER, markReplay } from '../../idempotency/replay';
import { CONVERSATION_META_KEY, ConversationHandles } from '../../sessions/conversation-handles';
import { SessionsService, type McpSession } from '../../sessions/sessions.service';
import { failure, rawResult, result, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from '../protocol/json-rpc';
import { decodeCursor, page } from '../protocol/pagination';
import { StatelessMeta } from '../protocol/stateless';
import { ALL_PROTOCOL_VERSIONS, SERVER_INFO, negotiateVersion } from '../protocol/versions';
import { SESSION_HEADER } from '../transport/responder';
import { AgentSurfaceCode, agentSurfaceError } from './errors';
import { eventRelay, parseInputRequestId, toCallResult, toMcpTool } from './mcp-shapes';
import { ResourcesAndPrompts, type AskContext } from './resources-and-prompts';

export interface AgentRequestContext {
  agentId: string;
  principal: ApiKeyPrincipal;
  session?: McpSession;
  /** Set when the response is an event stream: notifications for this request go here. */
  notify?: (notification: object) => void;
  /** Aborted when the client goes away before its answer. */
  disconnected?: AbortSignal;
  /** Set for a 2026-07-28 request: no session; results carry resultType; conversations by handle. */
  stateless?: { logLevel?: LogLevel };
}

export interface Handled {
  /** An object, or JSON text when the result must go out byte for byte; null: no response (cancelled). */
  response: JsonRpcResponse | string | null;
  /** HTTP headers to add, e.g. Mcp-Session-Id after initialize. */
  headers?: Record<string, string>;
  /** The method is not one this server knows (2026-07-28 answers that with HTTP 404). */
  unknownMethod?: boolean;
}

/** What this server offers, for initialize (and server/discover). */
export const SERVER_CAPABILITIES = {
  tools: { listChanged: true },
  logging: {},
  completions: {},
  resources: { subscribe: true },
  prompts: {},
} as const;

/** Surface A: one method, one handler. */
@Injectable()
export class AgentMcpHandler {
  constructor(
    private readonly sessions: SessionsService,
    private readonly catalogue: ToolCatalogueService,
    private readonly pipeline: CallPipeline,
    private readonly calls: CallRunner,
    private readonly inFlight: InFlightCalls,
    private readonly bus: BusClient,
    private readonly conversations: ConversationHandles,
    private readonly resourcesAndPrompts: ResourcesAndPrompts,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  async handle(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    const ok = (value: object): Handled => ({ response: result(request.id, complete(ctx, value)) });
    switch (request.method) {
      case 'server/discover':
        return ok(discovery(ctx.agentId));
      case 'initialize':
        return this.initialize(request, ctx);
      case 'ping':
        return ok({});
      case 'tools/list':
        return this.listTools(request, ctx);
      case 'tools/call':
        return this.callTool(request, ctx);
      case 'logging/setLevel':
        return this.setLogLevel(request, ctx);
      case 'resources/list':
        return { response: await this.resourcesAndPrompts.listResources(request, this.ask(ctx)) };
      case 'resources/templates/list':
        return { response: await this.resourcesAndPrompts.listTemplates(request, this.ask(ctx)) };
      case 'resources/read':
        return { response: await this.resourcesAndPrompts.readResource(request, this.ask(ctx)) };
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        return { response: await this.resourcesAndPrompts.subscription(request, this.ask(ctx)) };
      case 'prompts/list':
        return { response: await this.resourcesAndPrompts.listPrompts(request, this.ask(ctx)) };
      case 'prompts/get':
        return { response: await this.resourcesAndPrompts.getPrompt(request, this.ask(ctx)) };
      case 'completion/complete':
        return ok({ completion: { values: [], total: 0, hasMore: false } });
      default:
        return {
          response: failure(request.id, AgentSurfaceCode.MethodNotFound, `Method not found: ${request.method}`),
          unknownMethod: true,
        };
    }
  }

  private ask(ctx: AgentRequestContext): AskContext {
    return {
      agentId: ctx.agentId,
      callerId: `apikey:${ctx.principal.id}`,
      channelId: ctx.session?.channelId,
      shape: (value) => complete(ctx, value),
      cacheable: (value) => (ctx.stateless ? { ...value, ttlMs: 0, cacheScope: 'private' } : value),
    };
  }

  /** A request that may stream: tools/call with a progress token, or with a log level set. */
  wantsStream(request: JsonRpcRequest, ctx: Pick<AgentRequestContext, 'session' | 'stateless'>): boolean {
    if (request.method !== 'tools/call') return false;
    const meta = (request.params?._meta ?? {}) as Record<string, unknown>;
    return (
      meta.progressToken !== undefined ||
      (ctx.stateless?.logLevel ?? ctx.session?.logLevel) !== undefined ||
      // The agent may ask the client mid-call (sampling, elicitation): only a stream can carry that.
      (!ctx.stateless && !!ctx.session?.answersClientRequests)
    );
  }

  /** A client's JSON-RPC response: the answer to a request an agent made through us. */
  relayClientResponse(message: { id?: unknown; result?: unknown; error?: unknown }): void {
    const target = parseInputRequestId(message.id);
    if (!target) return;
    this.pipeline.answerInput(target.messageId, {
      key: target.key,
      ...(message.error ? { error: message.error as { code: number; message: string } } : { result: (message.result ?? {}) as Record<string, unknown> }),
    });
  }

  private async initialize(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    const params = request.params ?? {};
    const protocolVersion = negotiateVersion(params.protocolVersion);
    const capabilities = (params.capabilities ?? {}) as Record<string, unknown>;
    const session = await this.sessions.create(ctx.agentId, ctx.principal.id, protocolVersion, params.clientInfo, capabilities);
    return {
      headers: { [SESSION_HEADER]: session.id },
      response: result(request.id, {
        protocolVersion,
        capabilities: SERVER_CAPABILITIES,
        serverInfo: SERVER_INFO,
        instructions: `Tools of agent ${ctx.agentId}. Calls in one session share one conversation.`,
      }),
    };
  }

  private async listTools(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    const offset = decodeCursor(request.params?.cursor);
    if (offset === undefined) return { response: failure(request.id, AgentSurfaceCode.InvalidParams, 'Invalid cursor') };
    const { tools } = await this.catalogue.forAgent(ctx.agentId);
    const { items, nextCursor } = page(tools, offset, this.env.MCP_PAGE_SIZE);
    const listed = { tools: items.map(toMcpTool), ...(nextCursor ? { nextCursor } : {}) };
    // 2026-07-28 lists are cacheable: this one is the agent's, for this key only.
    return { response: result(request.id, complete(ctx, ctx.stateless ? { ...listed, ttlMs: 0, cacheScope: 'private' } : listed)) };
  }

  private async setLogLevel(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    const level = request.params?.level;
    if (!LOG_LEVELS.includes(level as LogLevel)) {
      return { response: failure(request.id, AgentSurfaceCode.InvalidParams, `level must be one of ${LOG_LEVELS.join(', ')}`) };
    }
    if (ctx.session) await this.sessions.setLogLevel(ctx.session, level as LogLevel);
    return { response: result(request.id, {}) };
  }

  private async callTool(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    const params = request.params ?? {};
    const invalid = (message: string) => ({ response: failure(request.id, AgentSurfaceCode.InvalidParams, message) });
    if (typeof params.name !== 'string' || params.name.length === 0) {
      return invalid('params.name must be a tool name (see tools/list)');
    }
    const args = params.arguments ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return invalid('params.arguments must be an object');
    }
    const keyed = takeIdempotencyKey(args as Record<string, unknown>);
    if (!keyed.ok) return invalid(keyed.problem);

    const callerId = `apikey:${ctx.principal.id}`;
    let channelId = ctx.session?.channelId;
    const handle = (params._meta as Record<string, unknown> | undefined)?.[CONVERSATION_META_KEY];
    if (ctx.stateless && handle !== undefined) {
      channelId = this.conversations.channelOf(handle, ctx.agentId, callerId);
      if (!channelId) return invalid(`_meta["${CONVERSATION_META_KEY}"] is not a conversation handle of this agent and key`);
    }
    const call: CallRequest = {
      agentId: ctx.agentId,
      callerId,
      tool: params.name,
      arguments: keyed.arguments,
      channelId,
      timeoutMs: callTimeout(params._meta, this.env.CALL_TIMEOUT_MS, this.env.CALL_TIMEOUT_MAX_MS),
    };
    // A stateless result names its conversation, so the client can continue it.
    const shape = (outcome: CallOutcome) =>
      ctx.stateless
        ? complete(ctx, {
            ...toCallResult(outcome),
            _meta: { [CONVERSATION_META_KEY]: this.conversations.mint(outcome.channelId, ctx.agentId, callerId) },
          })
        : toCallResult(outcome);
    const running = this.inFlight.begin(InFlightCalls.key(call.callerId, ctx.session?.id, request.id));
    const options: ExecuteOptions = {
      signal: ctx.disconnected ? AbortSignal.any([running.signal, ctx.disconnected]) : running.signal,
      ...(ctx.notify
        ? {
            onEvent: eventRelay(
              progressTokenOf(params._meta),
              logThreshold(ctx),
              ctx.notify,
              !ctx.stateless && !!ctx.session?.answersClientRequests,
            ),
          }
        : {}),
    };
    try {
      const ran = await this.calls.run('agent', call, keyed.key, shape, options);
      if (!ran.ok) {
        if (ran.error instanceof CallCancelledError) return { response: null };
        const { code, message, data } = agentSurfaceError(ran.error);
        return { response: failure(request.id, code, message, data) };
      }
      if (!ran.replayed) return { response: rawResult(request.id, ran.resultText) };
      return { response: rawResult(request.id, markReplay(ran.resultText)), headers: { [REPLAYED_HEADER]: 'true' } };
    } finally {
      running.end();
    }
  }

  /** notifications/cancelled: stop the request here, or on whichever replica runs it. */
  cancel(ctx: AgentRequestContext, requestId: JsonRpcId): void {
    if (!ctx.session) return; // request ids name nothing outside a session
    const key = InFlightCalls.key(`apikey:${ctx.principal.id}`, ctx.session?.id, requestId);
    if (!this.inFlight.cancel(key)) this.bus.publish(CallCancelled, { key });
  }
}

/** Log lines go to a legacy session at its level (all, if none set); stateless only with a logLevel. */
function logThreshold(ctx: AgentRequestContext): LogLevel | undefined | null {
  return ctx.stateless ? (ctx.stateless.logLevel ?? null) : ctx.session?.logLevel;
}

/** 2026-07-28 results say they are complete (no further input is required). */
function complete<T extends object>(ctx: AgentRequestContext, value: T): T {
  return ctx.stateless ? { resultType: 'complete', ...value } : value;
}

/** server/discover (2026-07-28): versions, capabilities and identity, cacheable by anyone. */
function discovery(agentId: string) {
  return {
    supportedVersions: ALL_PROTOCOL_VERSIONS,
    capabilities: { tools: {}, completions: {}, resources: {}, prompts: {} },
    serverInfo: SERVER_INFO,
    instructions: `Tools of agent ${agentId}. To continue a conversation, send back _meta["${CONVERSATION_META_KEY}"] from a tools/call result.`,
    ttlMs: 60_000,
    cacheScope: 'public',
    _meta: { [StatelessMeta.serverInfo]: SERVER_INFO },
  };
}

function progressTokenOf(meta: unknown): string | number | undefined {
  const token = (meta as { progressToken?: unknown } | undefined)?.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}
