import { Inject, Injectable } from '@nestjs/common';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import { Counter, Histogram, type Registry } from 'prom-client';

/** tools/call outcomes and latency, per surface, for `/metrics`. */
@Injectable()
export class CallMetrics {
  private readonly calls: Counter<'surface' | 'outcome'>;
  private readonly duration: Histogram<'surface'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.calls = new Counter({
      name: 'mcpgw_tool_calls_total',
      help: 'tools/call requests by surface and outcome (ok, tool_error, or the pipeline error kind)',
      labelNames: ['surface', 'outcome'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'mcpgw_tool_call_seconds',
      help: 'tools/call time through the whole path, from request to reply',
      labelNames: ['surface'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
  }

  /** Starts a timer; call the result with the outcome when the call ends. */
  start(surface: 'agent' | 'grant'): (outcome: string) => void {
    const stop = this.duration.startTimer({ surface });
    return (outcome) => {
      stop();
      this.calls.inc({ surface, outcome });
    };
  }
}
