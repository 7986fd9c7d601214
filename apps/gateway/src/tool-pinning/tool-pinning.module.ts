import { Inject, Injectable, Module } from '@nestjs/common';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import type { Registry } from 'prom-client';
import { ToolChangesStore } from './tool-changes.store';
import { pendingChangesGauge } from './tool-changes.metrics';
import { ToolPinning } from './tool-pinning.service';

@Injectable()
class ToolChangesMetrics {
  constructor(@Inject(METRICS_REGISTRY) registry: Registry, changes: ToolChangesStore) {
    pendingChangesGauge(registry, () => changes.pendingByAgent());
  }
}

/** Tool definitions pinned until an operator approves a change (README.md here). */
@Module({
  providers: [ToolChangesStore, ToolPinning, ToolChangesMetrics],
  exports: [ToolChangesStore, ToolPinning],
})
export class ToolPinningModule {}
