import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A keyed call's key on its posting (`../../messages/README.md`, "One key, one
 * posting"): a name-based UUID of agent, caller and key, held by one stored
 * chat_message at a time, so that a posting of another id with the same key
 * joins the holder instead of running the call again. Null for unkeyed
 * postings and for a holder that let go. A nullable column without a default:
 * no rewrite of the table; the unique index is partial, over keyed rows only,
 * built CONCURRENTLY, outside a transaction, so that a large table keeps taking
 * writes meanwhile. (Upgrade the message service before the gateway: a gateway
 * that sends keys to one that ignores them keeps no record of A2A messages.)
 */
export class MessageKeyRef1765200000000 implements MigrationInterface {
  name = 'MessageKeyRef1765200000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN IF NOT EXISTS key_ref uuid`);
    await q.query(
      `CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS messages_key_ref ON messages (key_ref) WHERE key_ref IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS messages_key_ref`);
    await q.query(`ALTER TABLE messages DROP COLUMN IF EXISTS key_ref`);
  }
}
