import { Injectable } from '@nestjs/common';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import type { GatewayDb } from '../database/schema';

/** Most pods kept per agent: past it, the least recently seen is dropped (a pod id per restart adds up). */
export const AGENT_PODS_MAX = 256;
/** A pod not seen for this long is forgotten. */
export const AGENT_PODS_KEEP_MS = 24 * 60 * 60 * 1000;
/**
 * How long heartbeats wait in a gateway's memory before one write stores them
 * (presence.recorder.ts): a pod is online while seen within 3 of its
 * intervals, give or take this write delay.
 */
export const PRESENCE_FLUSH_MS = 2_000;

/** A pod as the operator sees it. */
export interface PodView {
  pod_id: string;
  registered_at: string;
  last_seen_at: string;
  online: boolean;
}

/** One coalesced heartbeat: the newest a gateway heard of a pod since its last write. */
export interface Heartbeat {
  agent_id: string;
  pod_id: string;
  state: 'up' | 'leaving';
  interval_ms: number;
  at: Date;
}

/** Whether a row's pod is online now: heard within 3 of its intervals (plus the write delay), and not leaving. */
const online = sql<boolean>`(left_at IS NULL AND last_seen_at > now() - make_interval(secs => (3 * interval_ms + ${PRESENCE_FLUSH_MS}) / 1000.0))`;

/** The pods of each agent (agent_pods): written by registrations and presence, read by the admin API. */
@Injectable()
export class PodsStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /**
   * A pod registered: it is seen now and not leaving. Then the agent keeps at
   * most AGENT_PODS_MAX pods, the least recently seen dropped: an agent cannot
   * make the gateway store more, whatever pod ids it makes up.
   */
  async registered(agentId: string, podId: string): Promise<void> {
    await sql`
      WITH upserted AS (
        INSERT INTO agent_pods (agent_id, pod_id) VALUES (${agentId}, ${podId})
        ON CONFLICT (agent_id, pod_id)
        DO UPDATE SET registered_at = now(), last_seen_at = now(), left_at = NULL
      )
      -- Both parts see the rows as they were before: keep this pod and the others' newest MAX - 1.
      DELETE FROM agent_pods
      WHERE agent_id = ${agentId}
        AND pod_id IN (
          SELECT pod_id FROM agent_pods WHERE agent_id = ${agentId} AND pod_id <> ${podId}
          ORDER BY last_seen_at DESC, pod_id OFFSET ${AGENT_PODS_MAX - 1}
        )`.execute(this.db);
  }

  /**
   * Store heartbeats in one statement. Only pods that registered are
   * recorded: a heartbeat for a pod id the registry does not know changes
   * nothing (a pod registers before it beats, and again after a reconnect).
   */
  async heartbeats(beats: readonly Heartbeat[]): Promise<void> {
    if (!beats.length) return;
    await sql`
      UPDATE agent_pods AS p
      SET last_seen_at = GREATEST(p.last_seen_at, b.at),
          interval_ms = b.interval_ms,
          -- Replicas write in any order: an 'up' heard before a 'leaving' does not bring the pod back.
          left_at = CASE
            WHEN b.state = 'leaving' THEN GREATEST(p.left_at, b.at)
            WHEN p.left_at >= b.at THEN p.left_at
            ELSE NULL
          END
      FROM unnest(
        ${beats.map((b) => b.agent_id)}::text[], ${beats.map((b) => b.pod_id)}::text[],
        ${beats.map((b) => b.state)}::text[], ${beats.map((b) => b.interval_ms)}::int[],
        ${beats.map((b) => b.at.toISOString())}::timestamptz[]
      ) AS b(agent_id, pod_id, state, interval_ms, at)
      WHERE p.agent_id = b.agent_id AND p.pod_id = b.pod_id`.execute(this.db);
  }

  /** Forget pods not seen for AGENT_PODS_KEEP_MS. */
  async purge(): Promise<number> {
    const result = await this.db
      .deleteFrom('agent_pods')
      .where('last_seen_at', '<', new Date(Date.now() - AGENT_PODS_KEEP_MS))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** The agent's pods, the most recently seen first. */
  async pods(agentId: string): Promise<PodView[]> {
    const rows = await this.db
      .selectFrom('agent_pods')
      .select(['pod_id', 'registered_at', 'last_seen_at', online.as('online')])
      .where('agent_id', '=', agentId)
      .orderBy('last_seen_at', 'desc')
      .orderBy('pod_id')
      .execute();
    return rows.map((row) => ({
      pod_id: row.pod_id,
      registered_at: row.registered_at.toISOString(),
      last_seen_at: row.last_seen_at.toISOString(),
      online: row.online,
    }));
  }

  /** Online pods per agent (agents with none are absent). */
  async onlineCounts(): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('agent_pods')
      .select((eb) => ['agent_id', eb.cast<number>(eb.fn.countAll(), 'integer').as('online')])
      .where(online)
      .groupBy('agent_id')
      .execute();
    return new Map(rows.map((row) => [row.agent_id, row.online]));
  }
}
