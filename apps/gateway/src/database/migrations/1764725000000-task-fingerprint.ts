import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The fingerprint of a keyed task's call (an A2A message's: SHA-256 of its
 * skill and arguments), so that the same messageId with other arguments is
 * refused when its task exists, without posting the call again
 * (a2a/README.md, "Tasks"). Null for other tasks. A nullable column without a
 * default: no rewrite of the table.
 */
export class TaskFingerprint1764725000000 implements MigrationInterface {
  name = 'TaskFingerprint1764725000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mcp_tasks ADD COLUMN fingerprint bytea`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mcp_tasks DROP COLUMN fingerprint`);
  }
}
