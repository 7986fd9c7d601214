import { Inject, Injectable } from '@nestjs/common';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import { Counter, Histogram, type LabelValues, type Registry } from 'prom-client';
import type { CallSurface } from '../calls/call-shapes';

/** A call's name on the metrics: its agent and tool. */
export interface CallLabels {
  agentId: string;
  tool: string;
}

/** Tool names a caller made up are counted under one label, so a client cannot grow the series. */
export const UNKNOWN_TOOL = '(unknown)';

/**
 * tools/call outcomes (by surface, agent, tool and outcome: ok, tool_error,
 * replayed or the pipeline's error kind) and latency (by surface), for `/metrics`.
 * Agent and tool names are bounded: agents are registered by operators, tools by
 * their agent's catalogue; a tool that is not in it counts as UNKNOWN_TOOL.
 */
@Injectable()
export class CallMetrics {
  private readonly calls: Counter<'surface' | 'agent' | 'tool' | 'outcome'>;
  private readonly duration: Histogram<'surface'>;
  private readonly replays: Counter<'surface'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.calls = new Counter({
      name: 'mcpgw_tool_calls_total',
      help: 'tools/call requests by surface, agent, tool and outcome (ok, tool_error, replayed, or the error kind)',
      labelNames: ['surface', 'agent', 'tool', 'outcome'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'mcpgw_tool_call_seconds',
      help: 'tools/call time through the whole path, from request to reply; exemplars name a call (call_id)',
      labelNames: ['surface'],
      enableExemplars: true,
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    this.replays = new Counter({
      name: 'mcpgw_idempotency_replays_total',
      help: 'tools/call answered from an idempotency record (a retry with the same idempotency_key got the stored result), by surface',
      labelNames: ['surface'],
      registers: [registry],
    });
    for (const surface of ['agent', 'grant', 'rest', 'a2a']) this.replays.inc({ surface }, 0);
  }

  /**
   * Starts a timer; call the result with the outcome (and the call's id, once
   * it has one) when the call ends. The id becomes the latency bucket's
   * exemplar (`call_id`): a slow bucket names a call `admin call show` finds.
   */
  start(surface: CallSurface, call: CallLabels): (outcome: string, callId?: string) => void {
    const started = performance.now();
    return (outcome, callId) => {
      this.duration.observe({
        labels: { surface },
        value: (performance.now() - started) / 1000,
        // prom-client types exemplar labels as the metric's own label names; any names are valid.
        exemplarLabels: exemplarOf(callId) as LabelValues<'surface'>,
      });
      const tool = outcome === 'tool_not_found' ? UNKNOWN_TOOL : call.tool;
      this.calls.inc({ surface, agent: call.agentId, tool, outcome });
      if (outcome === 'replayed') this.replays.inc({ surface });
    };
  }
}

/** OpenMetrics caps an exemplar's label names and values at 128 characters together. */
const EXEMPLAR_MAX_CHARS = 128;

function exemplarOf(callId: string | undefined): Record<string, string> {
  return callId && 'call_id'.length + callId.length <= EXEMPLAR_MAX_CHARS ? { call_id: callId } : {};
}
