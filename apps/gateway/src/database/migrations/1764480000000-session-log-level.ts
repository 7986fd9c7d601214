import type { MigrationInterface, QueryRunner } from 'typeorm';

/** logging/setLevel: the level a session wants agent log lines from. */
export class SessionLogLevel1764480000000 implements MigrationInterface {
  name = 'SessionLogLevel1764480000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mcp_sessions ADD COLUMN log_level text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mcp_sessions DROP COLUMN log_level`);
  }
}
