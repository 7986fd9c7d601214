import { Module, type DynamicModule } from '@nestjs/common';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import { TracingShutdown } from './tracing/tracing-shutdown';

/** The process's Prometheus registry: default Node metrics, plus whatever the app registers. */
export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');

/**
 * A counter kept outside prom-client (plain numbers, cheap to bump on every
 * message) and read when /metrics is scraped.
 */
export interface CounterSource {
  name: string;
  help: string;
  labelNames: readonly string[];
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
