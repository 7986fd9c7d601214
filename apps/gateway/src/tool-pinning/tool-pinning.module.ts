import { Inject, Injectable, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import type { Registry } from 'prom-client';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { ToolChangesStore } from './tool-changes.store';
import { PendingChangesGauge } from './tool-changes.metrics';
import { ToolPinning } from './tool-pinning.service';

/** The gauge of waiting changes, read again when a registration or a decision is notified. */
@Injectable()
class ToolChangesMetrics implements OnModuleInit, OnApplicationShutdown {
  private readonly gauge: PendingChangesGauge;

  constructor(
    @Inject(METRICS_REGISTRY) registry: Registry,
    changes: ToolChangesStore,
    invalidation: CacheInvalidationService,
  ) {
    this.gauge = new PendingChangesGauge(registry, () => changes.pendingByAgent());
    // A registration notifies `agent:<id>`, a decision `toolchange:<id>`; undefined: the connection was lost.
    invalidation.on('agent', () => this.gauge.refresh());
    invalidation.on('toolchange', () => this.gauge.refresh());
  }

  onModuleInit(): Promise<void> {
    return this.gauge.now();
  }

  onApplicationShutdown(): void {
    this.gauge.stop();
  }
}

/** Tool definitions pinned until an operator approves a change (README.md here). */
@Module({
  providers: [ToolChangesStore, ToolPinning, ToolChangesMetrics],
  exports: [ToolChangesStore, ToolPinning],
})
export class ToolPinningModule {}
