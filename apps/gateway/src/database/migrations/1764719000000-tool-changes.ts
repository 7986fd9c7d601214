import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tool pinning (tool-pinning/README.md): each agent's tool-change policy (null:
 * the gateway's TOOL_CHANGES), and the changes its registrations proposed, each
 * a version of the agent's catalogue: pending until an operator approves or
 * rejects it (under `hold`), or approved by the policy (`accept`). `tools`
 * stays what clients are served: the approved definitions.
 */
export class ToolChanges1764719000000 implements MigrationInterface {
  name = 'ToolChanges1764719000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE agents ADD COLUMN tool_changes text CHECK (tool_changes IN ('accept', 'hold', 'reject'))`,
    );
    await q.query(`
      CREATE TABLE tool_changes (
        agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        version integer NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'superseded')),
        digest text NOT NULL,
        proposed jsonb NOT NULL,
        approved_before jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        decided_at timestamptz,
        decided_by text,
        PRIMARY KEY (agent_id, version)
      )`);
    // At most one change of an agent waits: a newer registration supersedes it.
    await q.query(`CREATE UNIQUE INDEX tool_changes_one_pending ON tool_changes (agent_id) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE tool_changes`);
    await q.query(`ALTER TABLE agents DROP COLUMN tool_changes`);
  }
}
