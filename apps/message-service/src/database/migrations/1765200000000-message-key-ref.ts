import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A keyed call's key on its posting (`../../messages/README.md`, "One key, one
 * posting"): a name-based UUID of agent, caller and key, held by one stored
 * chat_message at a time, so that a posting of another id with the same key
 * joins the holder instead of running the call again. Null for unkeyed
 * postings and for a holder that let go. A nullable column without a default:
 * no rewrite of the table; the unique index is partial, over keyed rows only.
 */
export class MessageKeyRef1765200000000 implements MigrationInterface {
  name = 'MessageKeyRef1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN key_ref uuid`);
    await q.query(`CREATE UNIQUE INDEX messages_key_ref ON messages (key_ref) WHERE key_ref IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX messages_key_ref`);
    await q.query(`ALTER TABLE messages DROP COLUMN key_ref`);
  }
}
