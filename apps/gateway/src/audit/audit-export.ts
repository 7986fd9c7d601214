import { Inject, Injectable } from '@nestjs/common';
import { SeverityNumber, type Logger as OtelLogger } from '@opentelemetry/api-logs';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import type { Anchor } from './audit.store';
import type { ChainedEntry } from './audit-record';

/**
 * The streaming sink: with OTEL_EXPORTER_OTLP_LOGS_ENDPOINT set, every row
 * written (after it is stored) and every anchor goes out as an OpenTelemetry
 * log record (OTLP/HTTP in binary protobuf, the encoding every OTLP receiver
 * must take; the official exporter, batched), so any SIEM that
 * takes OTLP holds a copy the database's owner cannot rewrite. Without it,
 * nothing is done.
 */
@Injectable()
export class AuditExport {
  private readonly provider?: LoggerProvider;
  private readonly logger?: OtelLogger;

  constructor(@Inject(GATEWAY_ENV) env: GatewayEnv) {
    const endpoint = env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT;
    if (!endpoint) return;
    this.provider = new LoggerProvider({
      resource: resourceFromAttributes({
        [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME || 'gateway',
        [ATTR_SERVICE_INSTANCE_ID]: env.SERVICE_INSTANCE || `${process.pid}`,
      }),
      // The signal path is the endpoint as given (OTLP: a per-signal endpoint is used as it is).
      processors: [
        new BatchLogRecordProcessor({
          exporter: new OTLPLogExporter({ url: endpoint }),
          scheduledDelayMillis: 500,
          maxQueueSize: 20_000,
        }),
      ],
    });
    this.logger = this.provider.getLogger('mcpgw.audit');
  }

  rows(rows: ChainedEntry[]): void {
    for (const row of rows) {
      this.logger?.emit({
        timestamp: new Date(row.at),
        severityNumber: SeverityNumber.INFO,
        severityText: 'INFO',
        eventName: `mcpgw.audit.${row.kind}`,
        body: JSON.stringify(row),
        attributes: {
          'mcpgw.audit.chain': row.chain,
          'mcpgw.audit.seq': row.seq,
          'mcpgw.audit.hash': row.hash,
          'mcpgw.audit.kind': row.kind,
          ...(row.principal && { 'mcpgw.audit.principal': row.principal }),
          ...(row.agent_id && { 'mcpgw.agent': row.agent_id }),
          ...(row.tool && { 'mcpgw.tool': row.tool }),
          ...(row.outcome && { 'mcpgw.outcome': row.outcome }),
        },
      });
    }
  }

  anchor(anchor: Anchor): void {
    this.logger?.emit({
      timestamp: new Date(anchor.at),
      severityNumber: SeverityNumber.INFO,
      severityText: 'INFO',
      eventName: 'mcpgw.audit.anchor',
      body: JSON.stringify(anchor),
      attributes: { 'mcpgw.audit.chain': anchor.chain, 'mcpgw.audit.seq': anchor.seq, 'mcpgw.audit.hash': anchor.hash },
    });
  }

  async shutdown(): Promise<void> {
    await this.provider?.shutdown().catch(() => undefined);
  }
}
