import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The operator's lists, newest first, of one agent (conversations/README.md):
 * its calls (chat_messages by the envelope's agent, then `seq`) and its
 * channels (by age, as retention reads them). Without an agent, the lists read
 * the primary key and channels_created_at backwards. Built CONCURRENTLY,
 * outside a transaction, so that large tables keep taking writes meanwhile.
 */
export class ConversationsByAgent1765000000001 implements MigrationInterface {
  name = 'ConversationsByAgent1765000000001';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_calls_by_agent ON messages ((envelope->>'agent_id'), seq)
      WHERE type = 'chat_message'`);
    await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS channels_by_agent ON channels (agent_id, created_at, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS channels_by_agent`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS messages_calls_by_agent`);
  }
}
