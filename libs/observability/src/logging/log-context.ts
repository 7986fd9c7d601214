import { isSpanContextValid, trace } from '@opentelemetry/api';
import { randomUUID } from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';

/** What every log line written while serving one request carries. */
export interface LogContext {
  request_id: string;
}

const storage = new AsyncLocalStorage<LogContext>();

/** Run `work` (and everything it starts) with `context` on its log lines. */
export function runWithLogContext<T>(context: LogContext, work: () => T): T {
  return storage.run(context, work);
}

/** The request being served here, if any. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.request_id;
}

/** The header a request id comes in and goes back in. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** What a caller's request id may be: at most 128 characters, letters, digits and `-_.:/+=@`. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:/+=@-]{1,128}$/;

/** The caller's `X-Request-Id` when it is safe to log and echo, else a new UUID. */
export function acceptRequestId(presented: string | string[] | undefined): string {
  return typeof presented === 'string' && SAFE_REQUEST_ID.test(presented) ? presented : randomUUID();
}

/**
 * The fields added to every log line: `request_id` inside a request, and
 * `trace_id`/`span_id` of the active span when tracing is on (with tracing off
 * there is never an active span, and this costs one lookup).
 */
export function logContextFields(): Record<string, string> {
  const fields: Record<string, string> = {};
  const requestId = storage.getStore()?.request_id;
  if (requestId) fields.request_id = requestId;
  const span = trace.getActiveSpan()?.spanContext();
  if (span && isSpanContextValid(span)) {
    fields.trace_id = span.traceId;
    fields.span_id = span.spanId;
  }
  return fields;
}
