import { Inject, Injectable } from '@nestjs/common';
import type { ContentItem } from '@mcpgw/contracts';
import type { RuntimeGrant } from '@mcpgw/grants';
import { InvalidArgumentsError } from '../../calls/call-errors';
import type { CallOutcome, CallRequest } from '../../calls/call-shapes';
import { CallRunner } from '../../calls/call-runner.service';
import { ToolCatalogueService, type CatalogueTool } from '../../catalogue/tool-catalogue.service';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import { takeIdempotencyKey } from '../../idempotency/idempotency-key';
import { taskCaller } from '../../grants/task-caller';
import { grantAllows, grantCallMeta, missingCredentials } from '../../grants/grant-tools';
import { CallTime } from '../../timeouts/call-time';
import { JsonRpcCode } from '../protocol/json-rpc';
import { StatelessCode } from '../protocol/stateless';
import { paramHeaderMismatch } from '../transport/param-headers';
import { GrantSurfaceError, grantSurfaceError, type WireError } from './errors';
import type { GrantRequest } from './grant-request';

type CallToolRequest = Extract<GrantRequest, { method: 'tools/call' }>;

export type GrantCallResult = { ok: true; resultText: string; replayed: boolean } | ({ ok: false } & WireError);

/** Surface B: the grant's tools, and calls of them, as the contract shapes them. */
@Injectable()
export class GrantMcpHandler {
  constructor(
    private readonly catalogue: ToolCatalogueService,
    private readonly calls: CallRunner,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  /** Only the tools this grant allows, each field present exactly when set. */
  async listTools(grant: RuntimeGrant) {
    return { tools: (await this.allowedTools(grant)).map(toContractTool) };
  }

  /**
   * `paramHeaders`: the `Mcp-Param-*` headers of a client that mirrors
   * parameters (2026-07-28, SEP-2243); given, they must agree with the tool's
   * `x-mcp-header` parameters, else 400 -32020.
   */
  async callTool(
    request: CallToolRequest,
    grant: RuntimeGrant,
    requestId: string,
    paramHeaders?: Record<string, string | string[] | undefined>,
  ): Promise<GrantCallResult> {
    const tool = (await this.allowedTools(grant)).find((t) => t.definition.name === request.name);
    if (!tool) {
      return {
        ok: false,
        ...GrantSurfaceError.ToolNotSupported,
        message: `tool not supported: ${request.name} (see tools/list)`,
      };
    }
    const mismatch = paramHeaders && paramHeaderMismatch(tool.headerParams, request.arguments, paramHeaders);
    if (mismatch)
      return { ok: false, status: 400, code: StatelessCode.HeaderMismatch, message: `Header mismatch: ${mismatch}` };
    const missing = missingCredentials(grant, tool);
    if (missing.length) {
      return {
        ok: false,
        ...GrantSurfaceError.CredentialUnavailable,
        message: `${request.name} needs credential(s) not available to this task: ${missing.join(', ')}`,
      };
    }
    const keyed = takeIdempotencyKey(request.arguments);
    if (!keyed.ok) return { ok: false, status: 400, code: JsonRpcCode.InvalidParams, message: keyed.problem };

    const call: CallRequest = {
      agentId: grant.agentId,
      callerId: taskCaller(grant),
      tool: request.name,
      arguments: keyed.arguments,
      callId: request.callId,
      time: CallTime.accept(request.meta, this.env),
      requestId,
      meta: grantCallMeta(tool),
    };
    const ran = await this.calls.run('grant', call, keyed.key, toContractResult);
    if (ran.ok) return ran;
    if (ran.error instanceof InvalidArgumentsError) {
      // The model can fix this by changing its arguments: a result, not a protocol error.
      const text = `Invalid arguments for ${request.name}: ${ran.error.problems.join('; ')}`;
      return {
        ok: true,
        resultText: JSON.stringify({ content: [{ type: 'text', text }], isError: true }),
        replayed: false,
      };
    }
    return { ok: false, ...grantSurfaceError(ran.error, requestId) };
  }

  private async allowedTools(grant: RuntimeGrant): Promise<CatalogueTool[]> {
    const { tools } = await this.catalogue.forAgent(grant.agentId);
    return tools.filter((tool) => grantAllows(grant, tool));
  }
}

export { taskCaller };

function toContractTool({ id, definition: d }: CatalogueTool) {
  return {
    id,
    name: d.name,
    ...(d.kind ? { kind: d.kind } : {}),
    ...(d.description ? { description: d.description } : {}),
    // A skill that does not say is treated as one that changes things.
    side_effect_class: d.side_effect_class ?? 'write',
    input_schema: d.input_schema,
    ...(d.output_schema ? { output_schema: d.output_schema } : {}),
    ...(d._meta ? { _meta: d._meta } : {}),
  };
}

/**
 * `structuredContent` per the contract; `content[0].text` is the JSON of
 * {call_id, tool_id, output}. `call_id` is the caller's `params.call_id`, or
 * the gateway's (`@mcpgw/contracts` call-id.ts).
 */
function toContractResult(outcome: CallOutcome) {
  if (outcome.isError) return { content: outcome.content, isError: true };
  const output = outcome.structuredContent ?? { content: outcome.content };
  const artifacts: ContentItem[] = outcome.content.filter((item) => item.type !== 'text');
  const core = { call_id: outcome.callId, tool_id: outcome.toolId, output };
  return {
    content: [{ type: 'text', text: JSON.stringify(core) }],
    structuredContent: {
      ...core,
      ...(outcome.reply.meta ? { metadata: outcome.reply.meta } : {}),
      ...(artifacts.length ? { artifacts } : {}),
      created_at: outcome.reply.created_at,
    },
  };
}
