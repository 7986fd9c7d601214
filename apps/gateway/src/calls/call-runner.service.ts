import { Injectable, Logger } from '@nestjs/common';
import { SpanKind, inSpan, markFailed, type Span } from '@mcpgw/observability';
import { AuditTrail } from '../audit/audit-trail.service';
import { IdempotentCalls } from '../idempotency/idempotent-calls.service';
import { CallMetrics, UNKNOWN_TOOL } from '../metrics/call-metrics';
import {
  OUTCOME_EVENTS,
  REPORTED_ERRORS,
  errorEvent,
  outcomeEvent,
  type ToolCallFacts,
} from '../webhooks/tool-call-events';
import { WebhookOutbox } from '../webhooks/webhook-outbox.service';
import { CallActivityBatcher } from './call-activity';
import { CallError } from './call-errors';
import { CallPipeline } from './call-pipeline.service';
import type { CallOutcome, CallRequest, CallSurface, ExecuteOptions } from './call-shapes';

/** A call's result as the surface rendered it (JSON text, serialized once), or its typed error. */
export type CallRun = { ok: true; resultText: string; replayed: boolean } | { ok: false; error: CallError };

/**
 * What both surfaces do around one tools/call: run it through the pipeline, or
 * through its idempotency record when the caller gave a key; count and time it;
 * render the outcome once, in the surface's shape; trace it (the server span
 * `tools/call <tool>`, the root of the call's trace when tracing is on); report
 * it to the agent's webhooks, if it has any for the event (webhooks/README.md), and
 * to the live consoles (`gateway.activity`, admin-api/live/README.md). The console's
 * playground calls through it too (surface `admin`). Errors of the call come back as
 * values, for the surface to map to its own codes; anything else throws.
 */
@Injectable()
export class CallRunner {
  private readonly logger = new Logger(CallRunner.name);

  constructor(
    private readonly pipeline: CallPipeline,
    private readonly idempotent: IdempotentCalls,
    private readonly metrics: CallMetrics,
    private readonly outbox: WebhookOutbox,
    private readonly activity: CallActivityBatcher,
    private readonly audit: AuditTrail,
  ) {}

  run(
    surface: CallSurface,
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
    surface: CallSurface,
    call: CallRequest,
    idempotencyKey: string | undefined,
    render: (outcome: CallOutcome) => object,
    options: ExecuteOptions,
    span: Span,
  ): Promise<CallRun> {
    let outcome = 'internal';
    /** For the audit trail: the answer's own outcome (a replay's too), and the pod that gave it. */
    let answered: { outcome: string; podId?: string } | undefined;
    const renderText = (answer: CallOutcome) => {
      // The answer's call: a posting joined by its key is another request's, with its own call id.
      callId = answer.callId;
      outcome = answer.isError ? 'tool_error' : 'ok';
      answered = { outcome, podId: podOf(answer) };
      return JSON.stringify(render(answer));
    };
    const done = this.metrics.start(surface, call);
    // Inside the call's span: with tracing on, these lines carry its trace_id.
    const line = { surface, request_id: call.requestId, agent_id: call.agentId, tool: call.tool };
    this.logger.debug({ msg: 'tools/call', ...line });
    const started = performance.now();
    let callId: string | undefined;
    const facts = (): ToolCallFacts => ({
      callId,
      agentId: call.agentId,
      callerId: call.callerId,
      tool: call.tool,
      surface,
      durationMs: Math.round(performance.now() - started),
    });
    const watched: ExecuteOptions = {
      ...options,
      onMessage: (ids) => {
        callId = ids.callId;
        span.setAttribute('mcpgw.call_id', ids.callId);
        options.onMessage?.(ids);
      },
    };
    try {
      if (!idempotencyKey) {
        const answer = await this.pipeline.call(call, watched);
        // No record to complete: the outbox row is the state change (webhooks/README.md).
        await this.report(outcomeEvent(facts(), answer), call);
        return { ok: true, resultText: renderText(answer), replayed: false };
      }
      const reported = OUTCOME_EVENTS.some((type) => this.outbox.wants(call.agentId, type, call.callerId));
      const ran = await this.idempotent.run(
        surface,
        call,
        idempotencyKey,
        renderText,
        watched,
        (answer) => {
          // The answer's call id: a posting joined by its key is another request's call.
          const event = outcomeEvent({ ...facts(), callId: answer.callId }, answer);
          return this.outbox.wants(call.agentId, event.type, call.callerId)
            ? (tx) => this.outbox.record(tx, call.agentId, call.callerId, event)
            : undefined;
        },
        reported,
      );
      if (ran.replayed) outcome = 'replayed';
      return { ok: true, ...ran };
    } catch (error) {
      if (!(error instanceof CallError)) throw error;
      outcome = error.kind;
      markFailed(span, error);
      if (REPORTED_ERRORS.has(error.kind)) await this.report(errorEvent(facts(), error), call);
      return { ok: false, error };
    } finally {
      done(outcome, callId);
      this.announce(surface, call, callId, outcome, started);
      this.audit.toolCall({
        surface,
        principal: call.callerId,
        agentId: call.agentId,
        tool: call.tool,
        callId,
        // A replay's stored answer is not read again: its row says `replayed`.
        outcome: answered?.outcome ?? outcome,
        ...(!answered && outcome !== 'replayed' && { errorCode: outcome }),
        durationMs: Math.round(performance.now() - started),
        podId: answered?.podId,
        replayed: outcome === 'replayed',
        arguments: call.arguments,
      });
      this.logger.debug({ msg: 'tools/call done', ...line, call_id: callId, outcome });
      span.setAttribute('mcpgw.outcome', outcome);
      // Span names stay few, as metric labels do: a tool the agent does not have is (unknown).
      if (outcome === 'tool_not_found') span.updateName(`tools/call ${UNKNOWN_TOOL}`);
    }
  }

  /** Tell the live consoles (GET /admin/v1/events on any replica) that the call ended: batched, never per message. */
  private announce(
    surface: CallSurface,
    call: CallRequest,
    callId: string | undefined,
    outcome: string,
    started: number,
  ): void {
    this.activity.ended({
      agent_id: call.agentId,
      tool: call.tool.slice(0, 512) || '(none)',
      surface,
      caller_id: call.callerId,
      call_id: callId ?? null,
      outcome,
      duration_ms: Math.round(performance.now() - started),
      at: new Date().toISOString(),
    });
  }

  /**
   * A call continued by an MRTR retry (mcp/input-required/) ends outside
   * `run`: its end is reported here, as `run` reports a call's end. The
   * duration is the last leg's (the retry's), the call id the first post's.
   */
  async reportContinued(
    surface: CallSurface,
    call: CallRequest,
    callId: string,
    startedAt: number,
    ended: { outcome: CallOutcome } | { error: CallError },
  ): Promise<void> {
    const facts: ToolCallFacts = {
      callId,
      agentId: call.agentId,
      callerId: call.callerId,
      tool: call.tool,
      surface,
      durationMs: Math.round(performance.now() - startedAt),
    };
    if ('outcome' in ended) return this.report(outcomeEvent(facts, ended.outcome), call);
    if (REPORTED_ERRORS.has(ended.error.kind)) await this.report(errorEvent(facts, ended.error), call);
  }

  /**
   * Write the event to the outbox before the caller gets its answer, when a
   * webhook hears it (from memory: otherwise no SQL); group-committed with other
   * calls' outcomes, one row per call whichever webhooks hear it. A failure to
   * write is logged, not turned into the call's error: the tool has run, and
   * an error would invite a retry that runs it again.
   */
  private async report(
    event: ReturnType<typeof outcomeEvent>,
    { agentId, callerId, time }: Pick<CallRequest, 'agentId' | 'callerId' | 'time'>,
  ): Promise<void> {
    try {
      // Waits out a database outage until the call's own deadline, no longer (DatabaseHold).
      await this.outbox.recordAlone(agentId, callerId, event, time.deadline);
    } catch (error) {
      this.logger.error({
        msg: 'webhook outbox write failed',
        agent_id: agentId,
        type: event.type,
        error: (error as Error).message,
      });
    }
  }
}

/** The pod that answered, as the reply says (`meta.pod_id`), if it says. */
function podOf(answer: CallOutcome): string | undefined {
  const pod = answer.reply?.meta?.pod_id;
  return typeof pod === 'string' ? pod.slice(0, 200) : undefined;
}
