import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tasks (MCP io.modelcontextprotocol/tasks): a tools/call that runs on the bus
 * while the client polls. The row is the task's state, bound to the caller
 * that made it; any replica answers for it (tasks/README.md).
 */
export class Tasks1764630000000 implements MigrationInterface {
  name = 'Tasks1764630000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE mcp_tasks (
        id uuid PRIMARY KEY,
        agent_id text NOT NULL,
        principal text NOT NULL,
        tool text NOT NULL,
        channel_id uuid NOT NULL,
        message_id uuid NOT NULL,
        status text NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
        input_requests jsonb NOT NULL DEFAULT '{}'::jsonb,
        result jsonb,
        error jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        ends_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX mcp_tasks_expires ON mcp_tasks (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE mcp_tasks`);
  }
}
