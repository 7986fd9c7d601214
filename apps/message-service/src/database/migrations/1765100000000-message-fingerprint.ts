import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The fingerprint of a keyed call's chat_message (SHA-256 of its tool and
 * arguments, as the gateway's idempotency records hold it), so that a second
 * posting of the same id with other content is refused instead of joining the
 * first (`../../messages/README.md`, "A posting again, with other content").
 * Null for a message posted without one. A nullable column without a default:
 * no rewrite of the table.
 */
export class MessageFingerprint1765100000000 implements MigrationInterface {
  name = 'MessageFingerprint1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN fingerprint bytea`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages DROP COLUMN fingerprint`);
  }
}
