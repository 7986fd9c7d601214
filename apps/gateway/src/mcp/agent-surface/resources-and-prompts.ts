import { Inject, Injectable } from '@nestjs/common';
import { CallError } from '../../calls/call-errors';
import { CallPipeline } from '../../calls/call-pipeline.service';
import { callTimeout } from '../../timeouts/call-time';
import { ToolCatalogueService } from '../../catalogue/tool-catalogue.service';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import type { JsonRpcRequest, JsonRpcResponse } from '../protocol/json-rpc';
import { failure, result } from '../protocol/json-rpc';
import { InputRequired, type Asker } from '../input-required/input-required.service';
import { CallTime } from '../../timeouts/call-time';
import type { AgentReply, CompleteDto } from '@mcpgw/contracts';
import { AgentSurfaceCode, agentSurfaceError } from './errors';

/** MCP's code for an unknown resource URI before 2026-07-28 (which uses -32602, SEP-2164). */
export const LEGACY_RESOURCE_NOT_FOUND = -32002;

/** MCP: a completion result holds at most 100 values. */
export const COMPLETION_MAX_VALUES = 100;

const NO_COMPLETION = { completion: { values: [], total: 0, hasMore: false } };

export interface AskContext {
  agentId: string;
  callerId: string;
  channelId?: string;
  /** Adds resultType and the like for the revision in use. */
  shape: <T extends object>(value: T) => T;
  /** 2026-07-28: list and read results say how long they may be cached. */
  cacheable: <T extends object>(value: T) => T;
  /** 2026-07-28: who asks, for input-required results (MRTR); absent in a session. */
  asker?: Asker;
  /** Aborted when the client goes away (2026-07-28). */
  disconnected?: AbortSignal;
  /** The code of "Resource not found" in the revision in use. */
  resourceNotFound: number;
}

/**
 * Resources and prompts an agent registered. Lists come from the catalogue;
 * resources/read, prompts/get and completion/complete travel to the agent
 * like a tool call does.
 */
@Injectable()
export class ResourcesAndPrompts {
  constructor(
    private readonly catalogue: ToolCatalogueService,
    private readonly pipeline: CallPipeline,
    private readonly inputRequired: InputRequired,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  async listResources(request: JsonRpcRequest, ctx: AskContext): Promise<JsonRpcResponse> {
    const { resources } = await this.catalogue.forAgent(ctx.agentId);
    return result(request.id, ctx.shape(ctx.cacheable({ resources })));
  }

  async listTemplates(request: JsonRpcRequest, ctx: AskContext): Promise<JsonRpcResponse> {
    const { resource_templates } = await this.catalogue.forAgent(ctx.agentId);
    return result(request.id, ctx.shape(ctx.cacheable({ resourceTemplates: resource_templates })));
  }

  async listPrompts(request: JsonRpcRequest, ctx: AskContext): Promise<JsonRpcResponse> {
    const { prompts } = await this.catalogue.forAgent(ctx.agentId);
    return result(request.id, ctx.shape(ctx.cacheable({ prompts })));
  }

  /** resources/subscribe and unsubscribe: accepted for known resources (the handler keeps them with the session). */
  async subscription(request: JsonRpcRequest, ctx: AskContext): Promise<JsonRpcResponse> {
    const { uri, problem } = this.uriOf(request);
    if (problem !== undefined) return failure(request.id, AgentSurfaceCode.InvalidParams, problem);
    if (!(await this.knows(ctx.agentId, uri)))
      return failure(request.id, ctx.resourceNotFound, 'Resource not found', { uri });
    return result(request.id, {});
  }

  async readResource(request: JsonRpcRequest, ctx: AskContext): Promise<JsonRpcResponse> {
    const { uri, problem } = this.uriOf(request);
    if (problem !== undefined) return failure(request.id, AgentSurfaceCode.InvalidParams, problem);
    if (!(await this.knows(ctx.agentId, uri)))
      return failure(request.id, ctx.resourceNotFound, 'Resource not found', { uri });
    return this.ask(request, ctx, { resource_read: { uri } }, (structured) =>
      ctx.cacheable({ contents: structured.contents ?? [] }),
    );
  }

  async getPrompt(request: JsonRpcRequest, ctx: AskContext): Promise<JsonRpcResponse> {
    const name = request.params?.name;
    const args = (request.params?.arguments ?? {}) as Record<string, unknown>;
    const prompt = (await this.catalogue.forAgent(ctx.agentId)).prompts.find((p) => p.name === name);
    if (!prompt)
      return failure(request.id, AgentSurfaceCode.InvalidParams, `Unknown prompt: ${String(name)} (see prompts/list)`);
    if (typeof args !== 'object' || Object.values(args).some((v) => typeof v !== 'string')) {
      return failure(request.id, AgentSurfaceCode.InvalidParams, 'params.arguments must map names to strings');
    }
    const missing = (prompt.arguments ?? []).filter((a) => a.required && args[a.name] === undefined).map((a) => a.name);
    if (missing.length)
      return failure(request.id, AgentSurfaceCode.InvalidParams, `Missing prompt arguments: ${missing.join(', ')}`);
    return this.ask(
      request,
      ctx,
      { prompt_get: { name: prompt.name, arguments: args as Record<string, string> } },
      (s) => s,
    );
  }

  /**
   * completion/complete: for a prompt's argument or a template's variable the
   * agent registered; asked of the agent if it registered `completions`, else
   * answered here with no values.
   */
  async complete(request: JsonRpcRequest, ctx: AskContext): Promise<JsonRpcResponse> {
    const parsed = completeParams(request.params);
    if (typeof parsed === 'string') return failure(request.id, AgentSurfaceCode.InvalidParams, parsed);
    const catalogue = await this.catalogue.forAgent(ctx.agentId);
    const { ref } = parsed;
    if (ref.type === 'ref/prompt' && !catalogue.prompts.some((p) => p.name === ref.name)) {
      return failure(request.id, AgentSurfaceCode.InvalidParams, `Unknown prompt: ${ref.name} (see prompts/list)`);
    }
    if (
      ref.type === 'ref/resource' &&
      !catalogue.resource_templates.some((t) => t.uriTemplate === ref.uri) &&
      !(await this.knows(ctx.agentId, ref.uri!))
    ) {
      return failure(request.id, ctx.resourceNotFound, 'Resource not found', { uri: ref.uri });
    }
    if (!catalogue.completions) return result(request.id, ctx.shape(NO_COMPLETION));
    return this.ask(request, ctx, { complete: parsed }, (structured) => ({ completion: completionOf(structured) }));
  }

  private async ask(
    request: JsonRpcRequest,
    ctx: AskContext,
    body: Parameters<CallPipeline['ask']>[1],
    shape: (structured: Record<string, unknown>) => object,
  ): Promise<JsonRpcResponse> {
    try {
      const timeoutMs = callTimeout(request.params?._meta, this.env.CALL_TIMEOUT_MS, this.env.CALL_TIMEOUT_MAX_MS);
      let reply: AgentReply;
      if (ctx.asker) {
        // 2026-07-28: the agent's questions become an InputRequiredResult (MRTR, ../input-required/).
        const begun = this.inputRequired.begin(request, ctx.asker);
        if (!begun.ok) return failure(request.id, AgentSurfaceCode.InvalidParams, begun.message);
        const served = await this.inputRequired.serve(
          request,
          ctx.asker,
          begun,
          { time: CallTime.of(timeoutMs, this.env), signal: ctx.disconnected },
          (options) => this.pipeline.ask({ ...ctx, timeoutMs }, body, options),
          (outcome) => outcome.reply,
        );
        if (!served.done) return result(request.id, served.result);
        reply = served.value;
      } else {
        reply = await this.pipeline.ask({ ...ctx, timeoutMs }, body);
      }
      if (reply.is_error) {
        const text =
          reply.content
            .map((c) => c.text)
            .filter(Boolean)
            .join('\n') || 'the agent could not answer';
        return failure(request.id, AgentSurfaceCode.InternalError, text);
      }
      return result(request.id, ctx.shape(shape(reply.structured_content ?? {})));
    } catch (error) {
      if (!(error instanceof CallError)) throw error;
      const { code, message, data } = agentSurfaceError(error);
      return failure(request.id, code, message, data);
    }
  }

  /** params.uri, or why it is refused (-32602): not a string, or longer than templates are matched against. */
  private uriOf(request: JsonRpcRequest): { uri: string; problem?: undefined } | { uri?: undefined; problem: string } {
    const uri = request.params?.uri;
    if (typeof uri !== 'string') return { problem: 'params.uri must be a string' };
    const max = this.env.RESOURCE_URI_MAX_CHARS;
    if (uri.length > max)
      return { problem: `params.uri is ${uri.length} characters long; at most ${max} are accepted` };
    return { uri };
  }

  /** A registered resource, or a URI of a template (parsed RFC 6570, matched in linear time). */
  private async knows(agentId: string, uri: string): Promise<boolean> {
    const { resources, templates } = await this.catalogue.forAgent(agentId);
    return resources.some((r) => r.uri === uri) || templates.some((t) => t.matches(uri));
  }
}

/** completion/complete's params as the agent gets them, or why they are refused (-32602). */
function completeParams(params: Record<string, unknown> | undefined): CompleteDto | string {
  const ref = params?.ref as Record<string, unknown> | undefined;
  const argument = params?.argument as Record<string, unknown> | undefined;
  const context = params?.context as { arguments?: unknown } | undefined;
  if (typeof ref !== 'object' || ref === null) return 'params.ref must be an object';
  if (ref.type === 'ref/prompt') {
    if (typeof ref.name !== 'string') return 'params.ref.name must be a string';
  } else if (ref.type === 'ref/resource') {
    if (typeof ref.uri !== 'string') return 'params.ref.uri must be a string';
  } else return "params.ref.type must be 'ref/prompt' or 'ref/resource'";
  if (typeof argument !== 'object' || argument === null) return 'params.argument must be an object';
  if (typeof argument.name !== 'string' || typeof argument.value !== 'string') {
    return 'params.argument must have a name and a value, both strings';
  }
  const resolved = context?.arguments;
  if (
    resolved !== undefined &&
    (typeof resolved !== 'object' || resolved === null || Object.values(resolved).some((v) => typeof v !== 'string'))
  ) {
    return 'params.context.arguments must map names to strings';
  }
  return {
    ref:
      ref.type === 'ref/prompt'
        ? { type: 'ref/prompt', name: ref.name as string }
        : { type: 'ref/resource', uri: ref.uri as string },
    argument: { name: argument.name, value: argument.value },
    ...(resolved !== undefined && { arguments: resolved as Record<string, string> }),
  };
}

/** The agent's `{completion}`, held to MCP's shape: strings only, at most 100 of them. */
function completionOf(structured: Record<string, unknown>): { values: string[]; total?: number; hasMore?: boolean } {
  const given = (structured.completion ?? {}) as { values?: unknown; total?: unknown; hasMore?: unknown };
  const values = Array.isArray(given.values) ? given.values.filter((v): v is string => typeof v === 'string') : [];
  const cut = values.length > COMPLETION_MAX_VALUES;
  return {
    values: values.slice(0, COMPLETION_MAX_VALUES),
    ...(typeof given.total === 'number' && Number.isInteger(given.total) && given.total >= 0 && { total: given.total }),
    ...((cut || typeof given.hasMore === 'boolean') && { hasMore: cut || (given.hasMore as boolean) }),
  };
}
