import { INVALID_SPAN_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { tracingOn } from './tracing';

const tracer = trace.getTracer('@mcpgw/observability');

/** What `work` gets when tracing is off: the API's non-recording span, one for the process. */
const OFF = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

export { SpanKind, type Span };

export interface SpanDescription {
  name: string;
  kind?: SpanKind;
  attributes?: Attributes;
}

/**
 * Run `work` in a new span, a child of the active one, ended when `work`
 * settles (an error it throws marks the span and is thrown on). With tracing
 * off `describe` is never called and `work` runs at once with a no-op span:
 * nothing is allocated for the trace.
 */
export function inSpan<T>(describe: () => SpanDescription, work: (span: Span) => Promise<T>): Promise<T> {
  if (!tracingOn()) return work(OFF);
  const { name, ...options } = describe();
  return tracer.startActiveSpan(name, options, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Record an error on a span: its status, and the exception event. */
export function markFailed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message ?? String(error) });
  if (error instanceof Error) span.recordException(error);
}
