import { Module, type DynamicModule } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type OpenMetricsContentType } from 'prom-client';
import { TracingShutdown } from './tracing/tracing-shutdown';

/** The process's Prometheus registry: default Node metrics, plus whatever the app registers. */
export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');

/**
 * A counter kept outside prom-client (plain numbers, cheap to bump on every
 * message) and read when /metrics is scraped; `kind: 'gauge'` for a value
 * that is set, not counted (a credential's expiry).
 */
export interface CounterSource {
  name: string;
  help: string;
  labelNames: readonly string[];
  kind?: 'counter' | 'gauge';
  read(): Iterable<[Record<string, string>, number]>;
}

/**
 * The process's Prometheus registry, with a `service` label on every series.
 * It is served on the management port (see management-server.ts). Every app
 * has this module, so it also flushes the process's spans at shutdown (tracing/).
 */
@Module({})
export class MetricsModule {
  static forService(service: string, counters: readonly CounterSource[] = []): DynamicModule {
    const registry = new Registry();
    // OpenMetrics: the text format that carries exemplars (a call's id on its latency bucket).
    // The apps type the registry as plain `Registry`: its content type is this module's business.
    (registry as unknown as Registry<OpenMetricsContentType>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: registry });
    for (const source of counters) registerCounterSource(registry, source);
    return {
      module: MetricsModule,
      global: true,
      providers: [{ provide: METRICS_REGISTRY, useValue: registry }, TracingShutdown],
      exports: [METRICS_REGISTRY],
    };
  }
}

function registerCounterSource(registry: Registry, source: CounterSource): void {
  if (source.kind === 'gauge') {
    new Gauge({
      name: source.name,
      help: source.help,
      labelNames: [...source.labelNames],
      registers: [registry],
      collect() {
        this.reset();
        for (const [labels, value] of source.read()) this.set(labels, value);
      },
    });
    return;
  }
  new Counter({
    name: source.name,
    help: source.help,
    labelNames: [...source.labelNames],
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, value] of source.read()) this.inc(labels, value);
    },
  });
}

/**
 * The hops of a tools/call, each timed on one process's clock (no clock skew between
 * hosts), each containing the ones after it:
 * - `gateway`: the gateway waits for the message service (post and wait, until the reply);
 * - `message_service`: the message service, from the post received to the reply in hand;
 * - `pod`: the agent pod, from the inbox message received to its reply sent.
 * What a hop adds itself is its time minus the next one's (and the gateway's own
 * share is `mcpgw_tool_call_seconds` minus hop `gateway`).
 */
export type Hop = 'gateway' | 'message_service' | 'pod';

export const HOP_METRIC = 'mcpgw_hop_duration_seconds';

/** Starts timing one pass through `hop`; call the result when it is done. In `registry`'s histogram. */
export function hopTimer(registry: Registry, hop: Hop): () => () => void {
  const histogram =
    (registry.getSingleMetric(HOP_METRIC) as Histogram<'hop'> | undefined) ??
    new Histogram({
      name: HOP_METRIC,
      help: 'tools/call time per hop, each on its own process: gateway (waiting for the message service), message_service (post to reply), pod (message to reply sent)',
      labelNames: ['hop'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
  return () => {
    const stop = histogram.startTimer({ hop });
    return () => void stop();
  };
}
