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

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
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
  const senders = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
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
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, senders, server };
}
