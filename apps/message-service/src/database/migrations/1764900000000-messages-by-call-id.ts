import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `admin call show <id>` finds a call's chat_message by its `call_id`
 * (`@mcpgw/contracts` call-id.ts). Built CONCURRENTLY, outside a transaction,
 * so that a large table keeps taking writes while it is built.
 */
export class MessagesByCallId1764900000000 implements MigrationInterface {
  name = 'MessagesByCallId1764900000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_call_id ON messages ((envelope->>'call_id'))
      WHERE type = 'chat_message'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS messages_call_id`);
  }
}
