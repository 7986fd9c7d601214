import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Draining } from '@mcpgw/runtime';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import { isDatabaseUnreachable } from '@mcpgw/persistence';
import { Counter, type Registry } from 'prom-client';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { AuditChain, type ChainHead } from './audit-chain';
import type { AuditEntry, ChainedEntry } from './audit-record';
import { AuditStore } from './audit.store';
import { AuditExport } from './audit-export';

/** Entries waiting to be linked and written past this are dropped (and counted), never blocking a call. */
const MAX_WAITING = 50_000;
/** At most this many rows a statement. */
const MAX_BATCH = 1_000;

/**
 * The trail's one writer in this process (README.md here). Calls and other
 * events hand it entries (`append`: memory only, never awaited by a call); it
 * links them into this process's chain and writes them every
 * AUDIT_FLUSH_INTERVAL_MS in one statement, then exports them (OTLP) when an
 * endpoint is set. Rows that could not be written are kept, already linked,
 * and written first next time: the chain never skips. Each chain's head is
 * anchored (logged, exported, stored) every AUDIT_ANCHOR_INTERVAL_MS, when its
 * day ends, and at shutdown.
 */
@Injectable()
export class AuditWriter implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Audit');
  private readonly chain: AuditChain;
  private waiting: AuditEntry[] = [];
  /** Linked, not yet stored (a failed write): written before anything newer. */
  private unwritten: ChainedEntry[] = [];
  private flushTimer?: NodeJS.Timeout;
  private anchorTimer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private anchored?: ChainHead;
  private readonly dropped: Counter;
  private readonly writes: Counter;
  readonly enabled: boolean;

  constructor(
    private readonly store: AuditStore,
    private readonly exporter: AuditExport,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    // The admin CLI has neither: it writes its rows when its command ends.
    @Optional() @Inject(METRICS_REGISTRY) registry?: Registry,
    @Optional() draining?: Draining,
  ) {
    this.enabled = env.AUDIT !== 'off';
    this.chain = new AuditChain(env.SERVICE_INSTANCE);
    this.dropped = new Counter({
      name: 'mcpgw_audit_dropped_total',
      help: 'audit entries dropped because too many waited to be written (the database was away too long)',
      registers: registry ? [registry] : [],
    });
    this.writes = new Counter({
      name: 'mcpgw_audit_writes_total',
      help: 'statements that wrote audit rows: at most one per AUDIT_FLUSH_INTERVAL_MS however many calls',
      registers: registry ? [registry] : [],
    });
    // The calls that end during the drain are written before the database closes.
    draining?.register({ name: 'audit', settled: () => this.flush() });
  }

  onModuleInit(): void {
    if (!this.enabled) return;
    this.flushTimer = setInterval(() => this.tick(), this.env.AUDIT_FLUSH_INTERVAL_MS).unref();
    this.anchorTimer = setInterval(() => void this.anchor(), this.env.AUDIT_ANCHOR_INTERVAL_MS).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.flushTimer);
    clearInterval(this.anchorTimer);
    await this.flush();
    await this.anchor();
    await this.exporter.shutdown();
  }

  /** Record it: memory only; written with the next flush. */
  append(entry: AuditEntry): void {
    if (!this.enabled) return;
    if (this.waiting.length + this.unwritten.length >= MAX_WAITING) return void this.dropped.inc();
    this.waiting.push(entry);
  }

  /** Write what waits now (tests and shutdown): after a write under way, everything appended before this call. */
  flush(): Promise<void> {
    const run: Promise<void> = (this.flushing ?? Promise.resolve())
      .then(() => this.write())
      .finally(() => {
        if (this.flushing === run) this.flushing = undefined;
      });
    this.flushing = run;
    return run;
  }

  /** The timer's turn: skipped while a write is under way (a slow database is not sent a queue of them). */
  private tick(): void {
    if (!this.flushing) void this.flush();
  }

  /**
   * One statement for what waits, more only while a backlog fills whole batches
   * (after the database was away): rows that arrive during the statement wait
   * for the next tick, so a busy gateway still writes once per interval.
   */
  private async write(): Promise<void> {
    let more = this.waiting.length > 0 || this.unwritten.length > 0;
    while (more) {
      more = this.waiting.length + this.unwritten.length > MAX_BATCH;
      const { rows, ended } = this.chain.link(this.waiting.splice(0, MAX_BATCH - this.unwritten.length));
      const batch = [...this.unwritten, ...rows];
      try {
        this.writes.inc();
        await this.store.insert(batch);
      } catch (error) {
        if (!isDatabaseUnreachable(error)) {
          // Refused for what it holds, it would be refused again and hold up every row behind it: it is
          // dropped, counted, and the gap shows in `audit verify` (the next row links to a row not there).
          this.dropped.inc(batch.length);
          this.unwritten = [];
          this.logger.error({
            msg: 'audit rows refused by the database; dropped',
            rows: batch.length,
            error: (error as Error).message,
          });
          continue;
        }
        this.unwritten = batch;
        this.logger.warn({
          msg: 'audit rows not written; kept to write first next time',
          rows: batch.length,
          error: (error as Error).message,
        });
        return;
      }
      this.unwritten = [];
      this.exporter.rows(batch);
      for (const head of ended) await this.anchorHead(head);
    }
  }

  /** The head of the current chain, if it moved since the last anchor. */
  private async anchor(): Promise<void> {
    const head = this.chain.current;
    if (!head || this.unwritten.length || (this.anchored?.chain === head.chain && this.anchored.seq === head.seq))
      return;
    await this.anchorHead(head);
  }

  private async anchorHead(head: ChainHead): Promise<void> {
    const anchor = { ...head, at: new Date().toISOString() };
    // The log line and the export are the copies outside the database: a rewrite of the table cannot reach them.
    this.logger.log({ msg: 'audit anchor', chain: anchor.chain, seq: anchor.seq, hash: anchor.hash });
    this.exporter.anchor(anchor);
    this.anchored = head;
    await this.store
      .anchor(anchor)
      .catch((error: Error) =>
        this.logger.warn({ msg: 'audit anchor not stored', chain: head.chain, error: error.message }),
      );
  }
}
