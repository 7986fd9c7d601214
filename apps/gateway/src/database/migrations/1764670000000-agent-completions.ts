import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Whether an agent answers completion/complete (`completions` in its
 * registration): the gateway asks only those, and answers the rest itself.
 */
export class AgentCompletions1764670000000 implements MigrationInterface {
  name = 'AgentCompletions1764670000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents ADD COLUMN completions boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents DROP COLUMN completions`);
  }
}
