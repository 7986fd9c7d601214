import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The pods of each agent (agents/README.md, "Pods and presence"): when each
 * registered, when it was last heard (registration or presence heartbeat),
 * the heartbeat interval it announced, and when it said it was leaving.
 * At most AGENT_PODS_MAX rows per agent (the least recently seen go first);
 * rows not seen for a day are purged.
 */
export class AgentPods1764717000000 implements MigrationInterface {
  name = 'AgentPods1764717000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE agent_pods (
        agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        pod_id text NOT NULL,
        registered_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        interval_ms integer NOT NULL DEFAULT 15000,
        left_at timestamptz,
        PRIMARY KEY (agent_id, pod_id)
      )`);
    // The cap (least recently seen of one agent) and the purge (not seen for a day).
    await q.query(`CREATE INDEX agent_pods_agent_seen ON agent_pods (agent_id, last_seen_at)`);
    await q.query(`CREATE INDEX agent_pods_seen ON agent_pods (last_seen_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE agent_pods`);
  }
}
