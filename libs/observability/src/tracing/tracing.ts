import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/** What tracing reads of an app's environment (libs/config `TracingEnv`, `LogEnv`). */
export interface TracingSettings {
  /** OTLP/HTTP base URL (`/v1/traces` is added); empty: tracing is off. */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  /** The `service.name` of the spans; empty: the app's name. */
  OTEL_SERVICE_NAME?: string;
  SERVICE_INSTANCE?: string;
}

let provider: BasicTracerProvider | undefined;

/**
 * Turn tracing on for this process when `OTEL_EXPORTER_OTLP_ENDPOINT` is set:
 * a tracer provider with a batch processor and the OTLP/HTTP (JSON) exporter,
 * an AsyncLocalStorage context manager and the W3C trace-context propagator,
 * registered as the OTel API's globals. When it is not set, nothing is
 * registered and the API stays a no-op: no span is recorded, no context is
 * kept, and the bus puts no header on any message (README.md). Call it once,
 * before the app is built; true when tracing is on.
 */
export function startTracing(service: string, settings: TracingSettings): boolean {
  const endpoint = settings.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || provider) return !!provider;
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });
  provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: settings.OTEL_SERVICE_NAME || service,
      [ATTR_SERVICE_INSTANCE_ID]: settings.SERVICE_INSTANCE || `${process.pid}`,
    }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return true;
}

/** Whether this process records spans (`startTracing` found an endpoint). */
export function tracingOn(): boolean {
  return provider !== undefined;
}

/** Export the spans still buffered and stop; a no-op when tracing is off. */
export async function stopTracing(): Promise<void> {
  const stopping = provider;
  provider = undefined;
  await stopping?.shutdown();
}
