import { Inject, Injectable } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../../auth/api-key-authenticator.service';
import { CallError } from '../../calls/call-errors';
import { CallPipeline } from '../../calls/call-pipeline.service';
import { ToolCatalogueService, type CatalogueTool } from '../../catalogue/tool-catalogue.service';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import { SessionsService, type McpSession } from '../../sessions/sessions.service';
import { failure, result, type JsonRpcRequest, type JsonRpcResponse } from '../protocol/json-rpc';
import { SERVER_INFO, negotiateVersion } from '../protocol/versions';
import { AgentSurfaceCode, agentSurfaceError } from './errors';

export interface AgentRequestContext {
  agentId: string;
  principal: ApiKeyPrincipal;
  session?: McpSession;
}

export interface Handled {
  response: JsonRpcResponse;
  /** Set when the request created a session (initialize). */
  sessionId?: string;
}

/** `_meta` key a call may use to ask for a shorter (or, up to the maximum, longer) reply timeout. */
export const TIMEOUT_META_KEY = 'mcpgw/timeoutMs';

/** Surface A: one method, one handler. */
@Injectable()
export class AgentMcpHandler {
  constructor(
    private readonly sessions: SessionsService,
    private readonly catalogue: ToolCatalogueService,
    private readonly pipeline: CallPipeline,
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
        return { response: await this.callTool(request, ctx) };
      default:
        return { response: failure(request.id, AgentSurfaceCode.MethodNotFound, `Method not found: ${request.method}`) };
    }
  }

  private async initialize(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<Handled> {
    const params = request.params ?? {};
    const protocolVersion = negotiateVersion(params.protocolVersion);
    const session = await this.sessions.create(ctx.agentId, ctx.principal.id, protocolVersion, params.clientInfo);
    return {
      sessionId: session.id,
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

  private async callTool(request: JsonRpcRequest, ctx: AgentRequestContext): Promise<JsonRpcResponse> {
    const params = request.params ?? {};
    if (typeof params.name !== 'string' || params.name.length === 0) {
      return failure(request.id, AgentSurfaceCode.InvalidParams, 'params.name must be a tool name (see tools/list)');
    }
    const args = params.arguments ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return failure(request.id, AgentSurfaceCode.InvalidParams, 'params.arguments must be an object');
    }
    try {
      const outcome = await this.pipeline.call({
        agentId: ctx.agentId,
        callerId: ctx.principal.id,
        tool: params.name,
        arguments: args as Record<string, unknown>,
        channelId: ctx.session?.channelId,
        timeoutMs: this.timeoutFor(params._meta),
      });
      return result(request.id, {
        content: outcome.content,
        ...(outcome.structuredContent ? { structuredContent: outcome.structuredContent } : {}),
        ...(outcome.isError ? { isError: true } : {}),
      });
    } catch (error) {
      if (!(error instanceof CallError)) throw error;
      const { code, message, data } = agentSurfaceError(error);
      return failure(request.id, code, message, data);
    }
  }

  private timeoutFor(meta: unknown): number {
    const asked = Number((meta as Record<string, unknown> | undefined)?.[TIMEOUT_META_KEY]);
    if (!Number.isFinite(asked) || asked <= 0) return this.env.CALL_TIMEOUT_MS;
    return Math.min(Math.max(Math.floor(asked), 100), this.env.CALL_TIMEOUT_MAX_MS);
  }
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
