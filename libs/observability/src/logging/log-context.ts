import { isSpanContextValid, trace } from '@opentelemetry/api';
import { randomUUID } from 'node:crypto';

/** The header a request id comes in and goes back in. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** What a caller's request id may be: at most 128 characters, letters, digits and `-_.:/+=@`. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:/+=@-]{1,128}$/;

/** The caller's `X-Request-Id` when it is safe to log and echo, else a new UUID. */
export function acceptRequestId(presented: string | string[] | undefined): string {
  return typeof presented === 'string' && SAFE_REQUEST_ID.test(presented) ? presented : randomUUID();
}

/**
 * The fields added to every log line: `trace_id`/`span_id` of the active span
 * when tracing is on (with tracing off there is never an active span, and this
 * costs one lookup).
 *
 * A request id is not among them: it is passed to the lines that concern a
 * request (`request_id`), by the code that serves it. Carrying it implicitly
 * would need an AsyncLocalStorage, whose promise hooks on Node 20 run for every
 * promise of every request, logged or not (docs/benchmarks.md measured about 3 %
 * of the gateway's CPU under load).
 */
export function logContextFields(): Record<string, string> {
  const fields: Record<string, string> = {};
  const span = trace.getActiveSpan()?.spanContext();
  if (span && isSpanContextValid(span)) {
    fields.trace_id = span.traceId;
    fields.span_id = span.spanId;
  }
  return fields;
}
