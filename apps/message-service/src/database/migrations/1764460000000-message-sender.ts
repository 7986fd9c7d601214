import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who sent each stored message, as the bus vouched for it: `gateway` for chat
 * messages (only the gateway's credentials may post them), `agent:<id>` for
 * replies (the agent the reply subject names, which only its credentials may
 * publish to), `rest` for the REST mirror. Null for rows from before.
 */
export class MessageSender1764460000000 implements MigrationInterface {
  name = 'MessageSender1764460000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN sender text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages DROP COLUMN sender`);
  }
}
