import { Inject, Injectable } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../../auth/api-key-authenticator.service';
import { CallError } from '../../calls/call-errors';
import { CallPipeline, type CallOutcome, type CallRequest } from '../../calls/call-pipeline.service';
import { callTimeout } from '../../calls/call-timeout';
import { ToolCatalogueService, type CatalogueTool } from '../../catalogue/tool-catalogue.service';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import { SessionsService, type McpSession } from '../../sessions/sessions.service';
import { IdempotentCalls } from '../../idempotency/idempotent-calls.service';
import { takeIdempotencyKey } from '../../idempotency/idempotency-key';
import { REPLAYED_HEADER, markReplay } from '../../idempotency/replay';
import { failure, rawResult, result, type JsonRpcRequest, type JsonRpcResponse } from '../protocol/json-rpc';
import { SESSION_HEADER } from '../transport/responder';
import { SERVER_INFO, negotiateVersion } from '../protocol/versions';
import { AgentSurfaceCode, agentSurfaceError } from './errors';

export interface AgentRequestContext {
  agentId: string;
  principal: ApiKeyPrincipal;
  session?: McpSession;
}

export interface Handled {
  /** An object, or JSON text when the result must go out byte for byte. */
  response: JsonRpcResponse | string;
  /** HTTP headers to add, e.g. Mcp-Session-Id after initialize. */
  headers?: Record<string, string>;
}


/** Surface A: one method, one handler. */
@Injectable()
export class AgentMcpHandler {
  constructor(
    private readonly sessions: SessionsService,
    private readonly catalogue: ToolCatalogueService,
    private readonly pipeline: CallPipeline,
    private readonly idempotent: IdempotentCalls,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  async handle(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    switch (request.method) {
      case 'initialize':
        return this.initialize(request, ctx);
      case 'ping':
        return { response: result(request.id, {}) };
      case 'tools/list':
        return { response: result(request.id, await this.listTools(ctx.agentId)) };
      case 'tools/call':
        return this.callTool(request, ctx);
      default:
        return { response: failure(request.id, AgentSurfaceCode.MethodNotFound, `Method not found: ${request.method}`) };
    }
  }

  private async initialize(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    const params = request.params ?? {};
    const protocolVersion = negotiateVersion(params.protocolVersion);
    const session = await this.sessions.create(ctx.agentId, ctx.principal.id, protocolVersion, params.clientInfo);
    return {
      headers: { [SESSION_HEADER]: session.id },
      response: result(request.id, {
        protocolVersion,
        capabilities: { tools: { listChanged: false } },
        serverInfo: SERVER_INFO,
        instructions: `Tools of agent ${ctx.agentId}. Calls in one session share one conversation.`,
      }),
    };
  }

  private async listTools(agentId: string) {
    const { tools } = await this.catalogue.forAgent(agentId);
    return { tools: tools.map(toMcpTool) };
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

    const call: CallRequest = {
      agentId: ctx.agentId,
      callerId: `apikey:${ctx.principal.id}`,
      tool: params.name,
      arguments: keyed.arguments,
      channelId: ctx.session?.channelId,
      timeoutMs: callTimeout(params._meta, this.env.CALL_TIMEOUT_MS, this.env.CALL_TIMEOUT_MAX_MS),
    };
    try {
      if (!keyed.key) return { response: result(request.id, toCallResult(await this.pipeline.call(call))) };
      const { resultText, replayed } = await this.idempotent.run(call, keyed.key, (outcome) =>
        JSON.stringify(toCallResult(outcome)),
      );
      if (!replayed) return { response: rawResult(request.id, resultText) };
      return { response: rawResult(request.id, markReplay(resultText)), headers: { [REPLAYED_HEADER]: 'true' } };
    } catch (error) {
      if (!(error instanceof CallError)) throw error;
      const { code, message, data } = agentSurfaceError(error);
      return { response: failure(request.id, code, message, data) };
    }
  }
}

function toCallResult(outcome: CallOutcome) {
  return {
    content: outcome.content,
    ...(outcome.structuredContent ? { structuredContent: outcome.structuredContent } : {}),
    ...(outcome.isError ? { isError: true } : {}),
  };
}

function toMcpTool({ definition }: CatalogueTool) {
  return {
    name: definition.name,
    ...(definition.title ? { title: definition.title } : {}),
    description: definition.description,
    inputSchema: definition.input_schema,
    ...(definition.output_schema ? { outputSchema: definition.output_schema } : {}),
    ...(definition.annotations ? { annotations: definition.annotations } : {}),
  };
}
