import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Gateway1764450000000 implements MigrationInterface {
  name = 'Gateway1764450000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE agents (
        id text PRIMARY KEY,
        workspace_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE tools (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        name text NOT NULL,
        definition jsonb NOT NULL,
        registered_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (agent_id, name)
      )`);
    await q.query(`
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        digest bytea NOT NULL,
        label text,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX api_keys_agent ON api_keys (agent_id)`);
    await q.query(`
      CREATE TABLE mcp_sessions (
        id text PRIMARY KEY,
        agent_id text NOT NULL,
        principal text NOT NULL,
        channel_id uuid NOT NULL,
        protocol_version text NOT NULL,
        client_info jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        ended_at timestamptz
      )`);
    await q.query(`CREATE INDEX mcp_sessions_expiry ON mcp_sessions (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE mcp_sessions`);
    await q.query(`DROP TABLE api_keys`);
    await q.query(`DROP TABLE tools`);
    await q.query(`DROP TABLE agents`);
  }
}
