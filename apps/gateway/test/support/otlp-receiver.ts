import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an app exported it (OTLP/HTTP, JSON), with the app that sent it. */
export interface ReceivedSpan {
  service: string;
  instance: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };

function attributesOf(list: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(
    list.map(({ key, value }) => [key, value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue]),
  );
}

/** A log record as an app exported it (OTLP/HTTP JSON, `POST /v1/logs`). */
export interface ReceivedLog {
  service: string;
  eventName?: string;
  body?: string;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  logs: ReceivedLog[];
  /** Every instance (`service.instance.id`) that exported. */
  senders: Set<string>;
  server: Server;
}

/**
 * An OTLP/HTTP receiver (JSON encoding, `POST /v1/traces`) that keeps every
 * span, and every exporting instance: start a stack with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` at its `url` to trace it.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const logs: ReceivedLog[] = [];
  const senders = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/logs') {
        logs.push(...logsOf(Buffer.concat(chunks).toString('utf8')));
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      }
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          resource: { attributes: OtlpAttribute[] };
          scopeSpans: {
            spans: (Omit<ReceivedSpan, 'service' | 'instance' | 'attributes'> & { attributes?: OtlpAttribute[] })[];
          }[];
        }[];
      };
      for (const { resource, scopeSpans } of body.resourceSpans) {
        const { 'service.name': service, 'service.instance.id': instance } = attributesOf(resource.attributes);
        senders.add(String(instance));
        for (const span of scopeSpans.flatMap((scope) => scope.spans)) {
          spans.push({
            ...span,
            parentSpanId: span.parentSpanId || undefined,
            service: String(service),
            instance: String(instance),
            attributes: attributesOf(span.attributes),
          });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, logs, senders, server };
}

/**
 * An ExportLogsServiceRequest in the OTLP/JSON mapping of the proto definitions
 * (opentelemetry-proto `logs/v1`): resourceLogs → scopeLogs → logRecords, each
 * with `timeUnixNano`, `severityNumber`, `body.stringValue`, `attributes` (KeyValue
 * list) and `eventName`. Anything else in the shape throws (the test fails).
 */
function logsOf(text: string): ReceivedLog[] {
  const request = JSON.parse(text) as {
    resourceLogs: {
      resource: { attributes: OtlpAttribute[] };
      scopeLogs: {
        scope: { name: string };
        logRecords: {
          timeUnixNano: string;
          severityNumber: number;
          body?: { stringValue?: string };
          attributes?: OtlpAttribute[];
          eventName?: string;
        }[];
      }[];
    }[];
  };
  const received: ReceivedLog[] = [];
  for (const { resource, scopeLogs } of request.resourceLogs) {
    const service = String(attributesOf(resource.attributes)['service.name']);
    for (const record of scopeLogs.flatMap((scope) => scope.logRecords)) {
      if (!/^\d+$/.test(String(record.timeUnixNano)) || typeof record.severityNumber !== 'number') {
        throw new Error(`not an OTLP log record: ${JSON.stringify(record).slice(0, 200)}`);
      }
      received.push({
        service,
        eventName: record.eventName,
        body: record.body?.stringValue,
        attributes: attributesOf(record.attributes),
      });
    }
  }
  return received;
}
