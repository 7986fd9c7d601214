import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { AgentReply, ChannelView, ChatMessage, Envelope, StoredMessage } from '@mcpgw/contracts';
import { DataSource } from 'typeorm';

export type InsertOutcome =
  | { kind: 'stored'; channelId: string; seq: number }
  | { kind: 'duplicate'; channelId: string; seq: number }
  | { kind: 'no_channel' }
  | { kind: 'no_message_to_answer' }
  /** The message already has another reply (a redelivered message answered twice). */
  | { kind: 'already_answered'; channelId: string; seq: number };

interface Row {
  seq: string;
  channel_id: string;
}

/** SQL for channels and messages. Every operation is one round trip. */
@Injectable()
export class MessagesStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async createChannel(agentId: string): Promise<ChannelView> {
    const [row] = await this.db.query(
      `INSERT INTO channels (agent_id) VALUES ($1) RETURNING id, agent_id, created_at`,
      [agentId],
    );
    return { id: row.id, agent_id: row.agent_id, created_at: new Date(row.created_at).toISOString() };
  }

  /** A new channel and its first message, atomically; a re-post makes no channel. */
  async insertOnNewChannel(message: ChatMessage): Promise<InsertOutcome> {
    const rows: Row[] = await this.db.query(
      `WITH channel AS (
         INSERT INTO channels (agent_id) SELECT $1
         WHERE NOT EXISTS (SELECT 1 FROM messages WHERE id = $2)
         RETURNING id)
       INSERT INTO messages (id, channel_id, type, envelope)
       SELECT $2, channel.id, 'chat_message', jsonb_set($3::jsonb, '{channel_id}', to_jsonb(channel.id)) FROM channel
       ON CONFLICT (id) DO NOTHING
       RETURNING seq, channel_id`,
      [message.agent_id, message.id, JSON.stringify(message)],
    );
    if (rows[0]) return { kind: 'stored', channelId: rows[0].channel_id, seq: Number(rows[0].seq) };
    // A re-post: the id exists, so report the original message's channel.
    return this.existing(message.id, 'duplicate');
  }

  async insertOnChannel(envelope: Envelope & { channel_id: string }): Promise<InsertOutcome> {
    const inReplyTo = envelope.type === 'agent_reply' ? envelope.in_reply_to : null;
    const rows: Row[] = await this.db.query(
      `INSERT INTO messages (id, channel_id, type, in_reply_to, envelope)
       SELECT $1, $2, $3, $4, $5::jsonb
       WHERE EXISTS (SELECT 1 FROM channels WHERE id = $2)
         AND ($4::uuid IS NULL OR EXISTS (SELECT 1 FROM messages WHERE id = $4 AND channel_id = $2))
       ON CONFLICT DO NOTHING
       RETURNING seq, channel_id`,
      [envelope.id, envelope.channel_id, envelope.type, inReplyTo, JSON.stringify(envelope)],
    );
    if (rows[0]) return { kind: 'stored', channelId: rows[0].channel_id, seq: Number(rows[0].seq) };
    return this.explainNoInsert(envelope, inReplyTo);
  }

  async list(channelId: string, limit: number): Promise<StoredMessage[] | undefined> {
    const rows: { seq: string; envelope: Envelope }[] = await this.db.query(
      `SELECT seq, envelope FROM (
         SELECT seq, envelope FROM messages WHERE channel_id = $1 ORDER BY seq DESC LIMIT $2
       ) latest ORDER BY seq ASC`,
      [channelId, limit],
    );
    if (rows.length === 0 && !(await this.channelExists(channelId))) return undefined;
    return rows.map((row) => ({ seq: Number(row.seq), envelope: row.envelope }));
  }

  /** Whether message M is on channel C, and its reply if one is stored. */
  async findReply(
    channelId: string,
    messageId: string,
  ): Promise<{ messageExists: boolean; reply?: AgentReply }> {
    const [row] = await this.db.query(
      `SELECT
         EXISTS (SELECT 1 FROM messages WHERE id = $2 AND channel_id = $1) AS message_exists,
         (SELECT envelope FROM messages
           WHERE channel_id = $1 AND in_reply_to = $2 AND type = 'agent_reply') AS reply`,
      [channelId, messageId],
    );
    return { messageExists: row.message_exists, reply: row.reply ?? undefined };
  }

  private async channelExists(channelId: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM channels WHERE id = $1`, [channelId]);
    return rows.length > 0;
  }

  private async explainNoInsert(envelope: Envelope, inReplyTo: string | null): Promise<InsertOutcome> {
    const same = await this.existing(envelope.id, 'duplicate');
    if (same.kind === 'duplicate') return same;
    if (!(await this.channelExists(envelope.channel_id!))) return { kind: 'no_channel' };
    if (inReplyTo) {
      const [row] = await this.db.query(
        `SELECT seq, channel_id FROM messages
          WHERE channel_id = $1 AND in_reply_to = $2 AND type = 'agent_reply'`,
        [envelope.channel_id, inReplyTo],
      );
      if (row) return { kind: 'already_answered', channelId: row.channel_id, seq: Number(row.seq) };
    }
    return { kind: 'no_message_to_answer' };
  }

  private async existing(id: string, kind: 'duplicate'): Promise<InsertOutcome> {
    const [row]: Row[] = await this.db.query(`SELECT seq, channel_id FROM messages WHERE id = $1`, [id]);
    return row ? { kind, channelId: row.channel_id, seq: Number(row.seq) } : { kind: 'no_channel' };
  }
}
