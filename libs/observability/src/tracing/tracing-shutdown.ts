import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { stopTracing } from './tracing';

/** Exports the spans still buffered when the app stops (provided by `MetricsModule`, which every app has). */
@Injectable()
export class TracingShutdown implements OnApplicationShutdown {
  onApplicationShutdown(): Promise<void> {
    return stopTracing();
  }
}
