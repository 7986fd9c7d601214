import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

/**
 * ExportLogsServiceRequest from the official OTLP definitions (./otlp-proto, vendored
 * unchanged from opentelemetry-proto), which the gateway's audit export sends in
 * binary protobuf: the encoding every OTLP receiver must take.
 */
const EXPORT_LOGS_REQUEST = (() => {
  const root = new protobuf.Root();
  const protos = join(dirname(fileURLToPath(import.meta.url)), 'otlp-proto');
  root.resolvePath = (_origin, target) => join(protos, target);
  root.loadSync('opentelemetry/proto/collector/logs/v1/logs_service.proto');
  return root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
})();

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

/** A log record as an app exported it (OTLP/HTTP protobuf, `POST /v1/logs`). */
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
        if (req.headers['content-type'] !== 'application/x-protobuf') return void res.writeHead(415).end();
        logs.push(...logsOf(Buffer.concat(chunks)));
        return void res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
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
 * An ExportLogsServiceRequest, decoded with the official definitions (a body they
 * do not describe throws: the test fails), then read in their JSON mapping:
 * resourceLogs → scopeLogs → logRecords, each with `timeUnixNano`,
 * `severityNumber`, `body.stringValue`, `attributes` (KeyValue list) and `eventName`.
 */
function logsOf(body: Buffer): ReceivedLog[] {
  const decoded = EXPORT_LOGS_REQUEST.decode(body);
  const request = EXPORT_LOGS_REQUEST.toObject(decoded, { longs: String, enums: Number, defaults: false }) as {
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
