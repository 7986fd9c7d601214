import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AgentPresence, agentOfSubject, type PresenceEvent } from '@mcpgw/contracts';
import { BusClient, refuseOnBus, type BusSubscription } from '@mcpgw/bus';
import { AGENT_PODS_MAX, PRESENCE_FLUSH_MS, PodsStore, type Heartbeat } from './pods.store';

/** Most heartbeats one replica holds between writes, over all agents. */
export const PRESENCE_PENDING_MAX = 20_000;
/** How often each replica forgets pods not seen for a day (PodsStore.purge). */
const PURGE_EVERY_MS = 10 * 60 * 1000;
/** The queue group: one gateway replica records each heartbeat. */
const QUEUE = 'gateway.presence';

/**
 * Hears the pods' heartbeats (`agents.<agent>.presence`) in a queue group and
 * stores them: the newest per pod is kept in memory and written every
 * PRESENCE_FLUSH_MS in one statement, never one per heartbeat. The agent is
 * the one the subject names (only its credentials may publish there); the
 * payload only names the pod. Memory is bounded: at most AGENT_PODS_MAX pods
 * per agent and PRESENCE_PENDING_MAX in all wait for a write; more are dropped
 * and counted.
 */
@Injectable()
export class PresenceRecorder implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(PresenceRecorder.name);
  private pending = new Map<string, Heartbeat>();
  private perAgent = new Map<string, number>();
  private subscription?: BusSubscription;
  private timers: NodeJS.Timeout[] = [];
  private writing?: Promise<void>;

  constructor(
    private readonly bus: BusClient,
    private readonly pods: PodsStore,
  ) {}

  onModuleInit(): void {
    this.subscription = this.bus.subscribe(
      AgentPresence.at('*'),
      ({ payload, subject }) => this.heard(agentOfSubject(this.bus.prefix, AgentPresence.family, subject), payload),
      { queue: QUEUE },
    );
    this.timers.push(setInterval(() => void this.flush(), PRESENCE_FLUSH_MS).unref());
    this.timers.push(setInterval(() => void this.purge(), PURGE_EVERY_MS).unref());
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscription?.unsubscribe();
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    await this.flush();
  }

  /** One heartbeat, already checked against the contract; `agentId` from the subject. */
  heard(agentId: string | undefined, event: PresenceEvent): void {
    if (!agentId) return refuseOnBus(AgentPresence.family, 'heartbeat', 'no agent in the subject');
    const key = `${agentId}\n${event.pod_id}`;
    if (!this.pending.has(key)) {
      const held = this.perAgent.get(agentId) ?? 0;
      if (held >= AGENT_PODS_MAX || this.pending.size >= PRESENCE_PENDING_MAX) {
        return refuseOnBus(AgentPresence.family, 'heartbeat over the pods held', `agent ${agentId}`);
      }
      this.perAgent.set(agentId, held + 1);
    }
    const { pod_id, state, interval_ms } = event;
    this.pending.set(key, { agent_id: agentId, pod_id, state, interval_ms, at: new Date() });
  }

  /** Write what is pending in one statement (one write at a time). Resolves once written or failed. */
  async flush(): Promise<void> {
    await this.writing;
    if (!this.pending.size) return;
    const beats = [...this.pending.values()];
    this.pending = new Map();
    this.perAgent = new Map();
    this.writing = this.pods.heartbeats(beats).catch((error: Error) => {
      // The next heartbeat of each pod comes within its interval: nothing to retry.
      this.logger.warn({ msg: 'heartbeats not stored', count: beats.length, error: error.message });
    });
    await this.writing;
  }

  private async purge(): Promise<void> {
    try {
      const purged = await this.pods.purge();
      if (purged) this.logger.log({ msg: 'pods not seen for a day forgotten', purged });
    } catch (error) {
      this.logger.warn({ msg: 'pod purge failed', error: (error as Error).message });
    }
  }
}
