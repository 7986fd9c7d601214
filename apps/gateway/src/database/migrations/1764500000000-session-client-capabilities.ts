import type { MigrationInterface, QueryRunner } from 'typeorm';

/** What the client declared at initialize: whether it can answer sampling or elicitation. */
export class SessionClientCapabilities1764500000000 implements MigrationInterface {
  name = 'SessionClientCapabilities1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mcp_sessions ADD COLUMN client_capabilities jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mcp_sessions DROP COLUMN client_capabilities`);
  }
}
