import { Injectable, Logger } from '@nestjs/common';
import { SpanKind, inSpan, markFailed, type Span } from '@mcpgw/observability';
import { IdempotentCalls } from '../idempotency/idempotent-calls.service';
import { CallMetrics, UNKNOWN_TOOL } from '../metrics/call-metrics';
import { CallError } from './call-errors';
import { CallPipeline, type CallOutcome, type CallRequest, type ExecuteOptions } from './call-pipeline.service';

/** A call's result as the surface rendered it (JSON text, serialized once), or its typed error. */
export type CallRun = { ok: true; resultText: string; replayed: boolean } | { ok: false; error: CallError };

/**
 * What both surfaces do around one tools/call: run it through the pipeline, or
 * through its idempotency record when the caller gave a key; count and time it;
 * render the outcome once, in the surface's shape; trace it (the server span
 * `tools/call <tool>`, the root of the call's trace when tracing is on). Errors
 * of the call come back as values, for the surface to map to its own codes;
 * anything else throws.
 */
@Injectable()
export class CallRunner {
  private readonly logger = new Logger(CallRunner.name);

  constructor(
    private readonly pipeline: CallPipeline,
    private readonly idempotent: IdempotentCalls,
    private readonly metrics: CallMetrics,
  ) {}

  run(
    surface: 'agent' | 'grant',
    call: CallRequest,
    idempotencyKey: string | undefined,
    render: (outcome: CallOutcome) => object,
    options: ExecuteOptions = {},
  ): Promise<CallRun> {
    const span = () => ({
      name: `tools/call ${call.tool}`,
      kind: SpanKind.SERVER,
      attributes: {
        'mcp.method.name': 'tools/call',
        'mcpgw.agent': call.agentId,
        'mcpgw.tool': call.tool,
        'mcpgw.surface': surface,
      },
    });
    return inSpan(span, (active) => this.runCounted(surface, call, idempotencyKey, render, options, active));
  }

  private async runCounted(
    surface: 'agent' | 'grant',
    call: CallRequest,
    idempotencyKey: string | undefined,
    render: (outcome: CallOutcome) => object,
    options: ExecuteOptions,
    span: Span,
  ): Promise<CallRun> {
    let outcome = 'internal';
    const renderText = (answer: CallOutcome) => {
      outcome = answer.isError ? 'tool_error' : 'ok';
      return JSON.stringify(render(answer));
    };
    const done = this.metrics.start(surface, call);
    // Inside the call's span: with tracing on, these lines carry its trace_id.
    const line = { surface, request_id: call.requestId, agent_id: call.agentId, tool: call.tool };
    this.logger.debug({ msg: 'tools/call', ...line });
    try {
      if (!idempotencyKey) {
        return { ok: true, resultText: renderText(await this.pipeline.call(call, options)), replayed: false };
      }
      const ran = await this.idempotent.run(call, idempotencyKey, renderText, options);
      if (ran.replayed) outcome = 'replayed';
      return { ok: true, ...ran };
    } catch (error) {
      if (!(error instanceof CallError)) throw error;
      outcome = error.kind;
      markFailed(span, error);
      return { ok: false, error };
    } finally {
      done(outcome);
      this.logger.debug({ msg: 'tools/call done', ...line, outcome });
      span.setAttribute('mcpgw.outcome', outcome);
      // Span names stay few, as metric labels do: a tool the agent does not have is (unknown).
      if (outcome === 'tool_not_found') span.updateName(`tools/call ${UNKNOWN_TOOL}`);
    }
  }
}
