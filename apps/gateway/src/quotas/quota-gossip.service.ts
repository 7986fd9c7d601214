import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { QuotaGossip, type QuotaGossipEvent } from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import { randomBytes } from 'node:crypto';
import { Gauge, type Registry } from 'prom-client';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { ClusterCounters } from './cluster-counters';

/** A replica not heard from for this many gossip periods is forgotten, with its counts. */
const STALE_PERIODS = 3;

/**
 * The quota gossip (README.md here): every QUOTA_GOSSIP_INTERVAL_MS this
 * replica publishes its nonzero counts per principal on one subject, and one
 * empty message when it falls idle, so the others drop its counts at once;
 * it hears every other replica's. One message per busy replica per period,
 * never one per call.
 */
@Injectable()
export class QuotaGossipService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(QuotaGossipService.name);
  readonly counters: ClusterCounters;
  /** This process, among the replicas (SERVICE_INSTANCE may repeat: a pid in containers). */
  readonly replica: string;
  private timer?: NodeJS.Timeout;
  private saidSomething = false;

  constructor(
    private readonly bus: BusClient,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.counters = new ClusterCounters(STALE_PERIODS * env.QUOTA_GOSSIP_INTERVAL_MS);
    this.replica = `${env.SERVICE_INSTANCE}-${randomBytes(6).toString('hex')}`;
    const counters = this.counters;
    new Gauge({
      name: 'mcpgw_quota_gossip_peers',
      help: 'Other gateway replicas whose quota counts this replica holds (heard within 3 gossip periods)',
      registers: [registry],
      collect() {
        this.set(counters.livePeers());
      },
    });
    new Gauge({
      name: 'mcpgw_quota_in_flight',
      help: 'Calls in flight (kind=calls) and GET streams open (kind=streams) on this replica, as its quotas count them',
      labelNames: ['kind'],
      registers: [registry],
      collect() {
        const { calls, streams } = counters.localTotals();
        this.set({ kind: 'calls' }, calls);
        this.set({ kind: 'streams' }, streams);
      },
    });
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.publish(), this.env.QUOTA_GOSSIP_INTERVAL_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Another replica's counts (our own echo is ignored). */
  heard(event: QuotaGossipEvent): void {
    if (event.replica !== this.replica) this.counters.hear(event.replica, event.entries);
  }

  private publish(): void {
    const entries = this.counters.snapshot();
    if (entries.length === 0 && !this.saidSomething) return;
    this.saidSomething = entries.length > 0;
    try {
      this.bus.publish(QuotaGossip, { replica: this.replica, entries });
    } catch (error) {
      // Lost gossip costs accuracy for one period, nothing else: the next one replaces it.
      this.logger.warn(`quota gossip: ${(error as Error).message}`);
    }
  }
}
