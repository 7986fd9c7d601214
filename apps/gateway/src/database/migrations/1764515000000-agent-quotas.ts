import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-agent quota overrides (NULL: the QUOTA_* default), set with
 * `npm run admin -- agent quotas`; and the index the open-sessions limit counts with.
 */
export class AgentQuotas1764515000000 implements MigrationInterface {
  name = 'AgentQuotas1764515000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE agent_quotas (
        agent_id text PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
        concurrent_calls integer CHECK (concurrent_calls >= 0),
        calls_per_second integer CHECK (calls_per_second >= 0),
        sessions integer CHECK (sessions >= 0),
        streams integer CHECK (streams >= 0),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX mcp_sessions_open_by_principal ON mcp_sessions (agent_id, principal) WHERE ended_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX mcp_sessions_open_by_principal`);
    await q.query(`DROP TABLE agent_quotas`);
  }
}
