import { Inject, Injectable } from '@nestjs/common';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import { Counter, Histogram, type Registry } from 'prom-client';

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
      help: 'tools/call time through the whole path, from request to reply',
      labelNames: ['surface'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    this.replays = new Counter({
      name: 'mcpgw_idempotency_replays_total',
      help: 'tools/call answered from an idempotency record (a retry with the same idempotency_key got the stored result), by surface',
      labelNames: ['surface'],
      registers: [registry],
    });
    for (const surface of ['agent', 'grant']) this.replays.inc({ surface }, 0);
  }

  /** Starts a timer; call the result with the outcome when the call ends. */
  start(surface: 'agent' | 'grant', call: CallLabels): (outcome: string) => void {
    const stop = this.duration.startTimer({ surface });
    return (outcome) => {
      stop();
      const tool = outcome === 'tool_not_found' ? UNKNOWN_TOOL : call.tool;
      this.calls.inc({ surface, agent: call.agentId, tool, outcome });
      if (outcome === 'replayed') this.replays.inc({ surface });
    };
  }
}
