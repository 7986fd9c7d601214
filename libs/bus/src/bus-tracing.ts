import {
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { CallHeaders } from '@mcpgw/contracts';
import { headers as natsHeaders, type MsgHdrs } from 'nats';

/*
 * Trace context across the bus, in NATS message headers (W3C `traceparent` /
 * `tracestate`). The bus carries a trace, it never starts one: a message gets
 * a span and headers only when it is sent inside a recording span, and a
 * message that arrives without `traceparent` is handled as before. With
 * tracing off (libs/observability/src/tracing) no span ever records, so this
 * costs a context lookup per send and a header check per receive, and no
 * headers object is made that was not made before.
 */

const tracer = trace.getTracer('@mcpgw/bus');
const REQUEST_ID = CallHeaders.requestId;
const TRACEPARENT = 'traceparent';

const setter: TextMapSetter<MsgHdrs> = { set: (carrier, key, value) => carrier.set(key, value) };
const getter: TextMapGetter<MsgHdrs> = {
  get: (carrier, key) => carrier.get(key) || undefined,
  keys: (carrier) => carrier.keys(),
};

/** The span of a message sent: its context travels in `headers`, end it when the send is done. */
export interface SendSpan {
  readonly headers: MsgHdrs;
  end(error?: unknown): void;
}

/**
 * A CLIENT (request) or PRODUCER (publish) span for a message about to be
 * sent, its context injected into `headers` (made when there are none).
 * Undefined when no recording span is active: send the message as it is.
 */
export function traceSend(
  kind: 'request' | 'publish',
  family: string,
  headers?: MsgHdrs,
  messageId?: string,
): SendSpan | undefined {
  if (!trace.getActiveSpan()?.isRecording()) return undefined;
  const span = tracer.startSpan(`${kind === 'request' ? 'send' : 'publish'} ${family}`, {
    kind: kind === 'request' ? SpanKind.CLIENT : SpanKind.PRODUCER,
    attributes: messagingAttributes('send', family, messageId),
  });
  const carrier = headers ?? natsHeaders();
  propagation.inject(trace.setSpan(context.active(), span), carrier, setter);
  return { headers: carrier, end: (error) => endSpan(span, error) };
}

/**
 * Run `work` (handling a message received) in the trace its headers carry,
 * under a SERVER (a request) or CONSUMER span ended when `work` settles; just
 * run it when the message carries no trace.
 */
export function traceReceive<T>(
  kind: 'request' | 'message',
  family: string,
  headers: MsgHdrs | undefined,
  work: () => T,
  messageId?: string,
): T {
  if (!headers?.has(TRACEPARENT)) return work();
  const parent = propagation.extract(context.active(), headers, getter);
  const span = tracer.startSpan(
    `process ${family}`,
    {
      kind: kind === 'request' ? SpanKind.SERVER : SpanKind.CONSUMER,
      attributes: messagingAttributes('process', family, messageId),
    },
    parent,
  );
  let result: T;
  try {
    result = context.with(trace.setSpan(parent, span), work);
  } catch (error) {
    endSpan(span, error);
    throw error;
  }
  if (result instanceof Promise) {
    return result.then(
      (value: unknown) => (endSpan(span), value),
      (error: unknown) => {
        endSpan(span, error);
        throw error;
      },
    ) as T;
  }
  endSpan(span);
  return result;
}

/** Mark the active span (a request being handled) failed with the code it answers. */
export function markActiveFailed(code: string, message: string): void {
  trace.getActiveSpan()?.setStatus({ code: SpanStatusCode.ERROR, message: `${code}: ${message}` });
}

function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message ?? String(error) });
  }
  span.end();
}

/** Messaging semantic conventions (the names are those of semconv's incubating `messaging.*`). */
function messagingAttributes(operation: string, family: string, messageId?: string) {
  return {
    'messaging.system': 'nats',
    'messaging.operation.type': operation,
    'messaging.destination.name': family,
    ...(messageId ? { 'messaging.message.id': messageId } : {}),
  };
}

/**
 * The ids of the call a message belongs to, for the handler's log lines: the
 * request id (`Mcpgw-Request-Id`) and the trace id of its `traceparent`. Passed
 * explicitly to the lines that concern the call, never kept in an async context
 * (libs/observability/README.md, "Logs").
 */
export interface CallIds {
  request_id?: string;
  trace_id?: string;
}

const TRACE_ID = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;
/** The same alphabet and length as an accepted X-Request-Id (libs/observability log-context.ts). */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:/+=@-]{1,128}$/;

export function callIdsOf(headers: MsgHdrs | undefined): CallIds {
  if (!headers) return {};
  const ids: CallIds = {};
  const requestId = headers.get(REQUEST_ID);
  if (requestId && SAFE_REQUEST_ID.test(requestId)) ids.request_id = requestId;
  const traceId = TRACE_ID.exec(headers.get(TRACEPARENT))?.[1];
  if (traceId && traceId !== '0'.repeat(32)) ids.trace_id = traceId;
  return ids;
}

/** `headers` (made when there are none) with the call's request id set, when there is one. */
export function withRequestId(headers: MsgHdrs | undefined, requestId: string | undefined): MsgHdrs | undefined {
  if (!requestId) return headers;
  const carrier = headers ?? natsHeaders();
  carrier.set(REQUEST_ID, requestId);
  return carrier;
}
