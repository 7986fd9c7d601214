import { Inject, Injectable } from '@nestjs/common';
import { callIdOf, type LogLevel } from '@mcpgw/contracts';
import { mayUseTool, principalCallMeta } from '../../auth/principal';
import {
  CallCancelledError,
  CallDetachedError,
  CallError,
  ConversationGoneError,
  ToolNotFoundError,
} from '../../calls/call-errors';
import type { CallOutcome, CallRequest, ExecuteOptions } from '../../calls/call-shapes';
import { CallRunner, type CallRun } from '../../calls/call-runner.service';
import { CallCancellation } from '../../cancellation/call-cancellation.service';
import { ToolCatalogueService } from '../../catalogue/tool-catalogue.service';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import { takeIdempotencyKey } from '../../idempotency/idempotency-key';
import { REPLAYED_HEADER, markReplay } from '../../idempotency/replay';
import { CONVERSATION_META_KEY, ConversationHandles } from '../../sessions/conversation-handles';
import { SessionsService } from '../../sessions/sessions.service';
import { CallTime } from '../../timeouts/call-time';
import { failure, rawResult, result, type JsonRpcRequest } from '../protocol/json-rpc';
import { StatelessCode } from '../protocol/stateless';
import { paramHeaderMismatch } from '../transport/param-headers';
import { decodeCursor, page } from '../protocol/pagination';
import { cacheable, complete, type AgentRequestContext, type Handled } from './agent-context';
import { AgentSurfaceCode, agentSurfaceError } from './errors';
import { InputRequired, type Asker, type Served } from '../input-required/input-required.service';
import { InputRequestIds } from './input-request-ids';
import { eventRelay, toCallResult, toMcpTool } from './mcp-shapes';
import { LegacyTasks } from '../../tasks/legacy-tasks.service';
import { TASK_AFTER_MS, TASKS_EXTENSION, TaskService, declaresTasks } from '../../tasks/tasks.service';

/**
 * Surface A's tools: `tools/list` from the catalogue, `tools/call` through the
 * shared CallRunner (as surface B does), with this surface's extras:
 * cancellation (the cancellation module's rules), event streaming, and
 * stateless conversation handles.
 */
@Injectable()
export class AgentTools {
  constructor(
    private readonly catalogue: ToolCatalogueService,
    private readonly calls: CallRunner,
    private readonly cancellation: CallCancellation,
    private readonly conversations: ConversationHandles,
    private readonly inputIds: InputRequestIds,
    private readonly sessions: SessionsService,
    private readonly inputRequired: InputRequired,
    private readonly tasks: TaskService,
    private readonly legacyTasks: LegacyTasks,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  async list(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    const offset = decodeCursor(request.params?.cursor);
    if (offset === undefined)
      return { response: failure(request.id, AgentSurfaceCode.InvalidParams, 'Invalid cursor') };
    const { tools } = await this.catalogue.forAgent(ctx.agentId);
    const visible = tools.filter((tool) => mayUseTool(ctx.principal, tool.definition.name));
    const { items, nextCursor } = page(visible, offset, this.env.MCP_PAGE_SIZE);
    const listed = { tools: items.map(toMcpTool), ...(nextCursor ? { nextCursor } : {}) };
    return { response: result(request.id, complete(ctx, cacheable(ctx, listed))) };
  }

  /**
   * What 2026-07-28 refuses before a call starts (and before a stream opens,
   * so the refusal keeps its HTTP 400): `Mcp-Param-*` headers that disagree
   * with the arguments (-32020), a client without a capability the tool needs
   * (-32021). An unknown tool is left to the call, which names it. The
   * controller asks this before it answers a request.
   */
  async refusal(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled | undefined> {
    if (!ctx.stateless || request.method !== 'tools/call') return undefined;
    const tool = (await this.catalogue.forAgent(ctx.agentId)).byName.get(String(request.params?.name));
    if (!tool || !mayUseTool(ctx.principal, tool.definition.name)) return undefined;
    const args = request.params?.arguments;
    const mismatch = paramHeaderMismatch(
      tool.headerParams,
      typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {},
      ctx.stateless.paramHeaders,
    );
    if (mismatch)
      return {
        status: 400,
        response: failure(request.id, StatelessCode.HeaderMismatch, `Header mismatch: ${mismatch}`),
      };
    const missing = {
      ...missingCapabilities(tool.definition.required_client_capabilities, ctx.stateless.clientCapabilities),
      // A tool that runs only as a task needs a client that declared the tasks extension.
      ...(tool.definition.execution?.taskSupport === 'required' && !declaresTasks(ctx.stateless.clientCapabilities)
        ? { extensions: { [TASKS_EXTENSION]: {} } }
        : {}),
    };
    if (Object.keys(missing).length)
      return {
        status: 400,
        response: failure(
          request.id,
          StatelessCode.MissingRequiredClientCapability,
          `Missing required client capability: ${Object.keys(missing).join(', ')} (tool ${tool.definition.name})`,
          { requiredCapabilities: missing },
        ),
      };
    return undefined;
  }

  /**
   * A 2025-11-25 session's tools/call: with `params.task` on a task tool, a
   * task made at once (`{task}`); without it on a `required` tool, -32601.
   * Undefined: a plain call.
   */
  private async legacyTask(
    request: JsonRpcRequest,
    call: CallRequest,
    taskSupport: string | undefined,
    keyed: boolean,
  ): Promise<Handled | undefined> {
    const asked = wantsLegacyTask(request.params ?? {});
    if (!asked && taskSupport === 'required')
      return {
        response: failure(
          request.id,
          AgentSurfaceCode.MethodNotFound,
          `Tool ${call.tool} runs only as a task (params.task)`,
        ),
      };
    if (!asked || keyed || (taskSupport !== 'optional' && taskSupport !== 'required')) return undefined;
    try {
      return { response: result(request.id, await this.legacyTasks.runAsTask(call)) };
    } catch (error) {
      if (!(error instanceof CallError)) throw error;
      const { code, message, data } = agentSurfaceError(error);
      return { response: failure(request.id, code, message, data) };
    }
  }

  async call(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
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
    if (!mayUseTool(ctx.principal, params.name)) {
      // A tool this caller may not use is, to it, a tool that does not exist.
      const { code, message, data } = agentSurfaceError(new ToolNotFoundError(params.name));
      return { response: failure(request.id, code, message, data) };
    }

    const callerId = ctx.principal.callerId;
    // 2026-07-28: the agent's questions become an InputRequiredResult; a retry continues the call (MRTR).
    const asker: Asker = { agentId: ctx.agentId, callerId, capabilities: ctx.stateless?.clientCapabilities ?? {} };
    const begun = ctx.stateless
      ? this.inputRequired.begin(
          request,
          asker,
          keyed.key ? 'the client cannot be asked during a call with an idempotency key' : undefined,
        )
      : undefined;
    if (begun && !begun.ok) return invalid(begun.message);
    let channelId = ctx.session?.channelId;
    const handle = (params._meta as Record<string, unknown> | undefined)?.[CONVERSATION_META_KEY];
    if (ctx.stateless && handle !== undefined) {
      channelId = this.conversations.channelOf(handle, ctx.agentId, callerId);
      if (!channelId)
        return invalid(`_meta["${CONVERSATION_META_KEY}"] is not a conversation handle of this agent and key`);
    }
    const call: CallRequest = {
      agentId: ctx.agentId,
      callerId,
      tool: params.name,
      arguments: keyed.arguments,
      channelId,
      time: CallTime.accept(params._meta, this.env),
      requestId: ctx.requestId,
      meta: principalCallMeta(ctx.principal),
    };
    // A stateless result names its conversation, so the client can continue it.
    const shape = (outcome: CallOutcome) =>
      ctx.stateless
        ? complete(
            ctx,
            toCallResult(outcome, {
              [CONVERSATION_META_KEY]: this.conversations.renew(handle, outcome.channelId, ctx.agentId, callerId),
            }),
          )
        : toCallResult(outcome);
    // A task tool, for a client that declared the tasks extension: the call may become a task (../../tasks/README.md).
    const taskSupport = (await this.catalogue.forAgent(ctx.agentId)).byName.get(params.name)?.definition.execution
      ?.taskSupport;
    if (!ctx.stateless && ctx.session) {
      const legacy = await this.legacyTask(request, call, taskSupport, !!keyed.key);
      if (legacy) return legacy;
    }
    const asTask =
      begun?.ok &&
      !keyed.key &&
      (taskSupport === 'optional' || taskSupport === 'required') &&
      declaresTasks(ctx.stateless?.clientCapabilities);
    if (asTask && !begun.state && !call.channelId) call.channelId = await this.tasks.channelFor(ctx.agentId);
    const escalate =
      asTask && begun.ok
        ? {
            afterMs: TASK_AFTER_MS,
            channelId: begun.state?.channelId ?? call.channelId!,
            toTask: (ref: { messageId: string; channelId: string }, callEndsAt: number) =>
              this.tasks.create({
                agentId: ctx.agentId,
                principal: callerId,
                tool: params.name as string,
                ...ref,
                endsAt: callEndsAt,
                capabilities: ctx.stateless?.clientCapabilities ?? {},
              }),
          }
        : undefined;
    const running = this.cancellation.begin(call.callerId, ctx.session?.id, request.id, ctx.disconnected);
    const relay = ctx.notify ? relayFor(params._meta, ctx, this.inputIds) : undefined;
    const run = (options: ExecuteOptions) => this.calls.run('agent', call, keyed.key, shape, options);
    try {
      let ran: CallRun;
      if (begun) {
        const leg = performance.now();
        let continued: { outcome: CallOutcome } | { error: CallError } | undefined;
        const served = await this.inputRequired
          .serve(
            request,
            asker,
            begun,
            { time: call.time, signal: running.signal, onEvent: relay, escalate },
            async (options) => {
              const fresh = await run(options);
              if (!fresh.ok && fresh.error instanceof CallDetachedError) throw fresh.error;
              return fresh;
            },
            (outcome): CallRun => {
              continued = { outcome };
              return { ok: true, resultText: JSON.stringify(shape(outcome)), replayed: false };
            },
          )
          .catch((error: unknown): Served<CallRun> => {
            if (!(error instanceof CallError)) throw error;
            if (begun.state) continued = { error };
            return { done: true, value: { ok: false, error } };
          });
        // A call an MRTR retry continued ended outside the runner: its webhooks hear of it here.
        if (continued && begun.state)
          await this.calls.reportContinued('agent', call, callIdOf(begun.state.messageId), leg, continued);
        if (!served.done) return { response: result(request.id, served.result) };
        ran = served.value;
      } else {
        ran = await run({ signal: running.signal, ...(relay ? { onEvent: relay } : {}) });
      }
      if (!ran.ok) {
        if (ran.error instanceof CallCancelledError) return { response: null };
        // The session's channel is gone (retention): end the session, so the client's next request gets 404 and it starts anew.
        if (ran.error instanceof ConversationGoneError && ctx.session && !ctx.stateless) {
          await this.sessions.end(ctx.session.id, ctx.session.agentId, ctx.session.principal).catch(() => false);
        }
        const { code, message, data } = agentSurfaceError(ran.error);
        return { response: failure(request.id, code, message, data) };
      }
      // The result is JSON text already: spliced into the response, never parsed and written again.
      if (!ran.replayed) return { response: rawResult(request.id, ran.resultText) };
      return { response: rawResult(request.id, markReplay(ran.resultText)), headers: { [REPLAYED_HEADER]: 'true' } };
    } finally {
      running.end();
    }
  }
}

/** 2025-11-25 `params.task`: the call runs as a task; a `required` tool refuses to run otherwise (-32601). */
function wantsLegacyTask(params: Record<string, unknown>): boolean {
  return typeof params.task === 'object' && params.task !== null && !Array.isArray(params.task);
}

/** The capabilities a tool requires that the client did not declare (top-level names), or undefined. */
function missingCapabilities(
  required: Record<string, unknown> | undefined,
  declared: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const missing = Object.entries(required ?? {}).filter(
    ([name]) => declared[name] === undefined || declared[name] === null,
  );
  return missing.length ? Object.fromEntries(missing) : undefined;
}

/** A request that may stream: tools/call with a progress token, or with a log level set. */
export function wantsStream(request: JsonRpcRequest, ctx: Pick<AgentRequestContext, 'session' | 'stateless'>): boolean {
  if (request.method !== 'tools/call') return false;
  const meta = (request.params?._meta ?? {}) as Record<string, unknown>;
  return (
    meta.progressToken !== undefined ||
    (ctx.stateless?.logLevel ?? ctx.session?.logLevel) !== undefined ||
    // The agent may ask the client mid-call (sampling, elicitation): only a stream can carry that.
    (!ctx.stateless && !!ctx.session?.answersClientRequests)
  );
}

/** The agent's events as this request's notifications, on the stream `ctx.notify` writes to. */
function relayFor(meta: unknown, ctx: AgentRequestContext, inputIds: InputRequestIds) {
  const token = (meta as { progressToken?: unknown } | undefined)?.progressToken;
  const progressToken = typeof token === 'string' || typeof token === 'number' ? token : undefined;
  const session = !ctx.stateless && ctx.session?.answersClientRequests ? ctx.session : undefined;
  return eventRelay(
    progressToken,
    logThreshold(ctx),
    ctx.notify!,
    session && ((messageId, key) => inputIds.idFor(messageId, key, session.id)),
    ctx.release,
  );
}

/** Log lines go to a legacy session at its level (all, if none set); stateless only with a logLevel. */
function logThreshold(ctx: AgentRequestContext): LogLevel | undefined | null {
  return ctx.stateless ? (ctx.stateless.logLevel ?? null) : ctx.session?.logLevel;
}
