import { Injectable } from '@nestjs/common';
import { LOG_LEVELS, UNSTORABLE_TEXT_REFUSAL, holdsUnstorableText, type LogLevel } from '@mcpgw/contracts';
import { CallPipeline } from '../../calls/call-pipeline.service';
import { CallCancellation } from '../../cancellation/call-cancellation.service';
import { CONVERSATION_META_KEY } from '../../sessions/conversation-handles';
import { SessionsService } from '../../sessions/sessions.service';
import { MAX_SESSION_RESOURCE_SUBSCRIPTIONS } from '../../sessions/sessions.store';
import { QuotasService } from '../../quotas/quotas.service';
import { retryAfterHeader } from '../../quotas/quota-refusal';
import { failure, result, type JsonRpcId, type JsonRpcRequest } from '../protocol/json-rpc';
import { decodeCursor, page } from '../protocol/pagination';
import { StatelessCode, StatelessMeta } from '../protocol/stateless';
import { ALL_PROTOCOL_VERSIONS, SERVER_INFO, negotiateVersion } from '../protocol/versions';
import { SESSION_HEADER } from '../transport/responder';
import { cacheable, complete, type AgentRequestContext, type Handled } from './agent-context';
import { AgentTools } from './agent-tools';
import { AgentSurfaceCode } from './errors';
import { InputRequestIds } from './input-request-ids';
import { LegacyTasks } from '../../tasks/legacy-tasks.service';
import { TASKS_EXTENSION, TaskService, declaresTasks, type TaskAnswer } from '../../tasks/tasks.service';
import { LEGACY_RESOURCE_NOT_FOUND, ResourcesAndPrompts, type AskContext } from './resources-and-prompts';

/** What this server offers, for initialize (and server/discover). */
export const SERVER_CAPABILITIES = {
  tools: { listChanged: true },
  logging: {},
  completions: {},
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  // 2025-11-25 tasks: tools/call with params.task, tasks/list and tasks/cancel (../../tasks/README.md).
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
} as const;

/** How many tasks one tasks/list page holds. */
const LIST_PAGE = 50;

/**
 * Surface A's dispatch, one case per method. Tools are `AgentTools`, resources
 * and prompts `ResourcesAndPrompts`; what stays here belongs to the session:
 * initialize, its log level, cancelling its requests, answers its client sends.
 */
@Injectable()
export class AgentMcpHandler {
  constructor(
    private readonly sessions: SessionsService,
    private readonly pipeline: CallPipeline,
    private readonly cancellation: CallCancellation,
    private readonly tools: AgentTools,
    private readonly resourcesAndPrompts: ResourcesAndPrompts,
    private readonly inputIds: InputRequestIds,
    private readonly quotas: QuotasService,
    private readonly tasks: TaskService,
    private readonly legacyTasks: LegacyTasks,
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
        return this.tools.list(request, ctx);
      case 'tools/call':
        return this.tools.call(request, ctx);
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
        return this.subscription(request, ctx);
      case 'prompts/list':
        return { response: await this.resourcesAndPrompts.listPrompts(request, this.ask(ctx)) };
      case 'prompts/get':
        return { response: await this.resourcesAndPrompts.getPrompt(request, this.ask(ctx)) };
      case 'tasks/get':
      case 'tasks/update':
      case 'tasks/cancel':
        if (ctx.stateless) return this.task(request, ctx);
        if (request.method !== 'tasks/update') return this.legacyTask(request, ctx);
        return {
          response: failure(request.id, AgentSurfaceCode.MethodNotFound, `Method not found: ${request.method}`),
          unknownMethod: true,
        };
      case 'tasks/result':
      case 'tasks/list':
        // Removed in 2026-07-28 (SEP-2663): only sessions of earlier revisions have them.
        if (!ctx.stateless) return this.legacyTask(request, ctx);
        return {
          response: failure(request.id, AgentSurfaceCode.MethodNotFound, `Method not found: ${request.method}`),
          unknownMethod: true,
        };
      case 'completion/complete':
        return { response: await this.resourcesAndPrompts.complete(request, this.ask(ctx)) };
      default:
        return {
          response: failure(request.id, AgentSurfaceCode.MethodNotFound, `Method not found: ${request.method}`),
          unknownMethod: true,
        };
    }
  }

  /** A refusal due before the request runs or its stream opens (HTTP 400 in 2026-07-28), if any. */
  refusal(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled | undefined> {
    return this.tools.refusal(request, ctx);
  }

  private ask(ctx: AgentRequestContext): AskContext {
    return {
      agentId: ctx.agentId,
      callerId: ctx.principal.callerId,
      channelId: ctx.session?.channelId,
      shape: (value) => complete(ctx, value),
      cacheable: (value) => cacheable(ctx, value),
      ...(ctx.stateless
        ? {
            asker: {
              agentId: ctx.agentId,
              callerId: ctx.principal.callerId,
              capabilities: ctx.stateless.clientCapabilities ?? {},
            },
            disconnected: ctx.disconnected,
          }
        : {}),
      resourceNotFound: ctx.stateless ? AgentSurfaceCode.InvalidParams : LEGACY_RESOURCE_NOT_FOUND,
    };
  }

  /**
   * tasks/get, tasks/update, tasks/cancel (2026-07-28, io.modelcontextprotocol/tasks): for a
   * client that declared the extension (else -32021), on the caller's own tasks (../../tasks/README.md).
   */
  private async task(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    if (!declaresTasks(ctx.stateless?.clientCapabilities))
      return {
        response: failure(
          request.id,
          StatelessCode.MissingRequiredClientCapability,
          `Missing required client capability: extensions.${TASKS_EXTENSION}`,
          { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
        ),
      };
    const params = request.params ?? {};
    const principal = ctx.principal.callerId;
    let answer: TaskAnswer;
    if (request.method === 'tasks/get') answer = await this.tasks.get(params.taskId, ctx.agentId, principal);
    else if (request.method === 'tasks/update')
      answer = await this.tasks.update(params.taskId, params.inputResponses, ctx.agentId, principal);
    else answer = await this.tasks.cancel(params.taskId, ctx.agentId, principal);
    return answer.ok
      ? { response: result(request.id, answer.value) }
      : { response: failure(request.id, AgentSurfaceCode.InvalidParams, answer.message) };
  }

  /** The 2025-11-25 tasks methods, for a session: its key's own tasks of this agent (../../tasks/README.md). */
  private async legacyTask(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    const params = request.params ?? {};
    const principal = ctx.principal.callerId;
    const invalid = (message: string): Handled => ({
      response: failure(request.id, AgentSurfaceCode.InvalidParams, message),
    });
    if (request.method === 'tasks/list') {
      const offset = decodeCursor(params.cursor);
      if (offset === undefined) return invalid('Invalid cursor');
      const { items, nextCursor } = page(await this.legacyTasks.list(ctx.agentId, principal), offset, LIST_PAGE);
      return { response: result(request.id, { tasks: items, ...(nextCursor ? { nextCursor } : {}) }) };
    }
    if (request.method === 'tasks/result') {
      const answer = await this.legacyTasks.result(params.taskId, ctx.agentId, principal, ctx.disconnected);
      if (answer.ok) return { response: result(request.id, answer.value) };
      return 'error' in answer
        ? { response: failure(request.id, answer.error.code, answer.error.message) }
        : invalid(answer.message);
    }
    const answer =
      request.method === 'tasks/get'
        ? await this.legacyTasks.get(params.taskId, ctx.agentId, principal)
        : await this.legacyTasks.cancel(params.taskId, ctx.agentId, principal);
    return answer.ok ? { response: result(request.id, answer.value) } : invalid(answer.message);
  }

  /** A client's JSON-RPC response: the answer to a request an agent made through us. */
  relayClientResponse(message: { id?: unknown; result?: unknown; error?: unknown }, ctx: AgentRequestContext): void {
    // Only the session the question went to may answer it: anything else is dropped.
    const target = this.inputIds.answerTarget(message.id, ctx.session?.id);
    if (!target) return;
    this.pipeline.answerInput(ctx.agentId, target.messageId, {
      key: target.key,
      ...(message.error
        ? { error: message.error as { code: number; message: string } }
        : { result: (message.result ?? {}) as Record<string, unknown> }),
    });
  }

  private async initialize(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    const params = request.params ?? {};
    const problem = initializeProblem(params);
    if (problem) return { response: failure(request.id, AgentSurfaceCode.InvalidParams, problem) };
    const protocolVersion = negotiateVersion(params.protocolVersion);
    const capabilities = (params.capabilities ?? {}) as Record<string, unknown>;
    const session = await this.sessions.create(
      ctx.agentId,
      ctx.principal.id,
      protocolVersion,
      params.clientInfo,
      capabilities,
      this.quotas.sessionLimit(ctx.agentId),
    );
    if (!session) {
      const refusal = this.quotas.sessionRefusal(ctx.agentId, ctx.principal.callerId);
      return {
        status: 429,
        headers: retryAfterHeader(refusal),
        response: failure(request.id, AgentSurfaceCode.QuotaExceeded, refusal.message, refusal.data),
      };
    }
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

  /**
   * resources/subscribe and unsubscribe (2025-11-25): kept with the session, so
   * its GET stream, on whichever replica, hears the resource's updates
   * (`list-changed.streams.ts`, `../subscriptions/README.md`).
   */
  private async subscription(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    const response = await this.resourcesAndPrompts.subscription(request, this.ask(ctx));
    if (!ctx.session || 'error' in response) return { response };
    const kept = await this.sessions.watchResource(
      ctx.session,
      request.params?.uri as string,
      request.method === 'resources/subscribe',
    );
    if (kept) return { response };
    return {
      response: failure(
        request.id,
        AgentSurfaceCode.InvalidParams,
        `a session may subscribe to at most ${MAX_SESSION_RESOURCE_SUBSCRIPTIONS} resources`,
      ),
    };
  }

  private async setLogLevel(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    const level = request.params?.level;
    if (!LOG_LEVELS.includes(level as LogLevel)) {
      return {
        response: failure(request.id, AgentSurfaceCode.InvalidParams, `level must be one of ${LOG_LEVELS.join(', ')}`),
      };
    }
    if (ctx.session) await this.sessions.setLogLevel(ctx.session, level as LogLevel);
    return { response: result(request.id, {}) };
  }

  /** A client's notification; only notifications/cancelled asks for anything (cancellation/README.md). */
  notify(message: { method: string; params?: Record<string, unknown> }, ctx: AgentRequestContext): void {
    if (message.method !== 'notifications/cancelled') return;
    const requestId = message.params?.requestId;
    if (typeof requestId === 'string' || typeof requestId === 'number') this.cancel(ctx, requestId);
  }

  /** notifications/cancelled: stop the request wherever it runs. */
  cancel(ctx: AgentRequestContext, requestId: JsonRpcId): void {
    this.cancellation.cancelRequest(ctx.principal.callerId, ctx.session?.id, requestId);
  }
}

/** What the session keeps of initialize must be objects, and storable (see storable-text.ts). */
function initializeProblem(params: Record<string, unknown>): string | undefined {
  for (const name of ['capabilities', 'clientInfo']) {
    const value = params[name];
    if (value === undefined) continue;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return `params.${name} must be an object`;
    if (holdsUnstorableText(value)) return `params.${name}: ${UNSTORABLE_TEXT_REFUSAL}`;
  }
  return undefined;
}

/** server/discover (2026-07-28): versions, capabilities and identity, cacheable by anyone. */
function discovery(agentId: string) {
  return {
    supportedVersions: ALL_PROTOCOL_VERSIONS,
    // List changes and resource updates reach clients through subscriptions/listen (../subscriptions/).
    capabilities: {
      tools: { listChanged: true },
      completions: {},
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      // Long tools run as tasks for clients that declare the extension too (../../tasks/README.md).
      extensions: { [TASKS_EXTENSION]: {} },
    },
    serverInfo: SERVER_INFO,
    instructions: `Tools of agent ${agentId}. To continue a conversation, send back _meta["${CONVERSATION_META_KEY}"] from a tools/call result.`,
    ttlMs: 60_000,
    cacheScope: 'public',
    _meta: { [StatelessMeta.serverInfo]: SERVER_INFO },
  };
}
