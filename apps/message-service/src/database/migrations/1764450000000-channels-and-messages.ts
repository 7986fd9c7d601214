import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ChannelsAndMessages1764450000000 implements MigrationInterface {
  name = 'ChannelsAndMessages1764450000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE channels (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        agent_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE messages (
        seq bigserial PRIMARY KEY,
        id uuid NOT NULL UNIQUE,
        channel_id uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
        type text NOT NULL CHECK (type IN ('chat_message', 'agent_reply')),
        in_reply_to uuid,
        envelope jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX messages_channel_seq ON messages (channel_id, seq)`);
    // One reply per message: a redelivered message answered twice keeps the first answer.
    await q.query(`
      CREATE UNIQUE INDEX messages_one_reply ON messages (channel_id, in_reply_to)
      WHERE type = 'agent_reply'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE messages`);
    await q.query(`DROP TABLE channels`);
  }
}
