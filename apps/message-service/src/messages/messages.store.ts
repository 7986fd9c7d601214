import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { AgentReply, ChannelView, ChatMessage, Envelope, StoredMessage } from '@mcpgw/contracts';
import { GroupCommit } from '@mcpgw/persistence';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';

export type InsertOutcome =
  | { kind: 'stored'; channelId: string; seq: number }
  | { kind: 'duplicate'; channelId: string; seq: number }
  | { kind: 'no_channel' }
  | { kind: 'no_message_to_answer' }
  /** The message already has another reply (a redelivered message answered twice). */
  | { kind: 'already_answered'; channelId: string; seq: number };

interface Row {
  id: string;
  seq: string;
  channel_id: string;
}

/** An envelope as one row of a batched insert. */
interface NewRow {
  id: string;
  channelId: string;
  /** The channel is made with this message (it starts a conversation). */
  newChannel: boolean;
  agentId: string;
  type: Envelope['type'];
  inReplyTo: string | null;
  json: string;
}

/**
 * Messages that start conversations, with their channels. A message id already
 * stored makes no channel and no row (the caller then reports the original).
 */
const INSERT_ON_NEW_CHANNELS = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[]) AS i(id, channel_id, agent_id, envelope)
  ), channel AS (
    INSERT INTO channels (id, agent_id)
    SELECT i.channel_id, i.agent_id FROM input i
     WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = i.id)
    RETURNING id
  )
  INSERT INTO messages (id, channel_id, type, envelope)
  SELECT i.id, i.channel_id, 'chat_message', i.envelope FROM input i JOIN channel ON channel.id = i.channel_id
  ON CONFLICT (id) DO NOTHING
  RETURNING id, seq, channel_id`;

/**
 * Messages and replies on existing channels. A row is skipped when its channel
 * does not exist, when it answers a message that is not on that channel, or
 * when its id (or a reply to the same message) is already stored.
 */
const INSERT_ON_CHANNELS = `
  INSERT INTO messages (id, channel_id, type, in_reply_to, envelope)
  SELECT i.id, i.channel_id, i.type, i.in_reply_to, i.envelope
    FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::uuid[], $5::jsonb[]) AS i(id, channel_id, type, in_reply_to, envelope)
   WHERE EXISTS (SELECT 1 FROM channels WHERE id = i.channel_id)
     AND (i.in_reply_to IS NULL OR EXISTS (SELECT 1 FROM messages WHERE id = i.in_reply_to AND channel_id = i.channel_id))
  ON CONFLICT DO NOTHING
  RETURNING id, seq, channel_id`;

/** The batch as one array per column, the way unnest takes it. */
function columns<K extends keyof NewRow>(rows: NewRow[], keys: K[]): NewRow[K][][] {
  return keys.map((key) => rows.map((row) => row[key]));
}

/**
 * SQL for channels and messages. Every operation is one round trip; inserts
 * are group-committed (see GroupCommit), so a busy service writes many
 * messages per statement.
 */
@Injectable()
export class MessagesStore {
  private readonly writes = new GroupCommit<NewRow, InsertOutcome | undefined>((rows) => this.insertBatch(rows));

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async createChannel(agentId: string): Promise<ChannelView> {
    const [row] = await this.db.query(
      `INSERT INTO channels (agent_id) VALUES ($1) RETURNING id, agent_id, created_at`,
      [agentId],
    );
    return { id: row.id, agent_id: row.agent_id, created_at: new Date(row.created_at).toISOString() };
  }

  /**
   * Store an envelope. Without a channel id (a chat message starting a
   * conversation) the channel is made with it, atomically; a re-post makes no
   * channel. Concurrent inserts share one statement and one commit.
   */
  async insert(envelope: Envelope): Promise<InsertOutcome> {
    const channelId = envelope.channel_id ?? randomUUID();
    const row: NewRow = {
      id: envelope.id,
      channelId,
      newChannel: envelope.channel_id === undefined,
      agentId: envelope.agent_id,
      type: envelope.type,
      inReplyTo: envelope.type === 'agent_reply' ? envelope.in_reply_to : null,
      json: JSON.stringify(envelope.channel_id ? envelope : { ...envelope, channel_id: channelId }),
    };
    return (await this.writes.submit(row)) ?? this.explainNoInsert(envelope, row.inReplyTo);
  }

  /** One batch: at most one statement for messages on new channels, one for the rest, side by side. */
  private async insertBatch(rows: NewRow[]): Promise<(InsertOutcome | undefined)[]> {
    const onNew = rows.filter((row) => row.newChannel);
    const onExisting = rows.filter((row) => !row.newChannel);
    const inserted = new Map<string, Row>();
    const results = await Promise.all([
      onNew.length ? this.db.query(INSERT_ON_NEW_CHANNELS, columns(onNew, ['id', 'channelId', 'agentId', 'json'])) : [],
      onExisting.length
        ? this.db.query(INSERT_ON_CHANNELS, columns(onExisting, ['id', 'channelId', 'type', 'inReplyTo', 'json']))
        : [],
    ]);
    // PostgreSQL answers with lower-case UUIDs; a sender may have written capitals.
    for (const row of results.flat() as Row[]) inserted.set(row.id, row);
    return rows.map((row) => {
      const id = row.id.toLowerCase();
      const stored = inserted.get(id);
      // Two rows of one batch with one id: only the first is the insert.
      if (!stored || (stored.channel_id !== row.channelId && row.newChannel)) return undefined;
      inserted.delete(id);
      return { kind: 'stored', channelId: stored.channel_id, seq: Number(stored.seq) };
    });
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

  /** Why an envelope was not stored (the rare path: a re-post, a bad channel, a second reply). */
  private async explainNoInsert(envelope: Envelope, inReplyTo: string | null): Promise<InsertOutcome> {
    const same = await this.existing(envelope.id, 'duplicate');
    if (same.kind === 'duplicate' || !envelope.channel_id) return same;
    if (!(await this.channelExists(envelope.channel_id))) return { kind: 'no_channel' };
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
