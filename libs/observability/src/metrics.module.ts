import { Controller, Get, Header, Module, type DynamicModule } from '@nestjs/common';
import { Registry, collectDefaultMetrics } from 'prom-client';

/** The process's Prometheus registry: default Node metrics, plus whatever the app registers. */
export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');

@Controller()
class MetricsController {
  constructor(private readonly registry: Registry) {}

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4')
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}

/** `GET /metrics` in the Prometheus text format, with a `service` label on every series. */
@Module({})
export class MetricsModule {
  static forService(service: string): DynamicModule {
    const registry = new Registry();
    registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: registry });
    return {
      module: MetricsModule,
      global: true,
      controllers: [MetricsController],
      providers: [
        { provide: Registry, useValue: registry },
        { provide: METRICS_REGISTRY, useValue: registry },
      ],
      exports: [METRICS_REGISTRY],
    };
  }
}
