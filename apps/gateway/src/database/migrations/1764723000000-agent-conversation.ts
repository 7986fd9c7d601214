import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Whether an agent answers conversational messages (`conversation` in its
 * registration: an SDK message handler): the A2A surface posts a message that
 * names no skill only to those, and answers the rest UnsupportedOperationError
 * itself, with no bus round trip (a2a/README.md).
 */
export class AgentConversation1764723000000 implements MigrationInterface {
  name = 'AgentConversation1764723000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents ADD COLUMN conversation boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents DROP COLUMN conversation`);
  }
}
