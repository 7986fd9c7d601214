import { Injectable } from '@nestjs/common';
import type { AgentReply, ChannelView, ChatMessage, Envelope, PostingKey, StoredMessage } from '@mcpgw/contracts';
import { InvalidRequestError, UNSTORABLE_TEXT_REFUSAL, jsonHoldsUnstorableText } from '@mcpgw/contracts';
import { GroupCommit, InjectKysely, holdingUntil, type HoldDeadline } from '@mcpgw/persistence';
import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import type { MessagingDb } from '../database/schema';
import { insertBatchStatement, type NewRow, type Row } from './insert-batch.store';

export type InsertOutcome =
  | { kind: 'stored'; channelId: string; seq: number }
  /** Stored before: the same id, or (a chat_message) another id holding the same key (README.md). */
  | { kind: 'duplicate'; channelId: string; seq: number; posting?: StoredPosting }
  /** The id is stored with another fingerprint: the same key with other content (README.md beside this file). */
  | { kind: 'reused' }
  | { kind: 'no_channel' }
  | { kind: 'no_message_to_answer' }
  /** A reply whose agent is not the channel's agent. */
  | { kind: 'wrong_agent' }
  /** The message already has another reply (a redelivered message answered twice). */
  | { kind: 'already_answered'; channelId: string; seq: number };

/** The stored chat_message a re-post joined. */
export interface StoredPosting {
  id: string;
  /** Its envelope's `created_at` and `call_id`, as its poster wrote them. */
  createdAt: string;
  callId?: string;
  /** The stored envelope, when the re-post joined it by its key under another id (to deliver it again). */
  envelope?: ChatMessage;
}

/** The key's holder let go of it: insert once more. */
interface KeyLetGo {
  kind: 'key_let_go';
}

/** A stored row that may be a re-post's posting. */
interface Holder {
  id: string;
  channelId: string;
  seq: number;
  fingerprint: Buffer | null;
  createdAt: string;
  callId: string | null;
}

/** Who posted an envelope, and what its post carried besides. */
export interface PostedWith {
  /** Who sent it, as the bus vouched. */
  sender?: string | null;
  /** The trace its post carried, kept for the operator's views. */
  traceId?: string;
  /** A keyed call's fingerprint (SHA-256, hex): a re-post of its id with another is `reused`. */
  fingerprint?: string;
  /** A keyed call's key: a posting of another id holding it is joined (or, with another fingerprint, `reused`). */
  key?: PostingKey;
  /** How long its caller lets it wait out a database outage (the wait's deadline); none: DB_OUTAGE_HOLD_MS. */
  deadline?: HoldDeadline;
}

/**
 * SQL for channels and messages. Every operation is one round trip; inserts
 * are group-committed (see GroupCommit), so a busy service writes many
 * messages per statement.
 */
@Injectable()
export class MessagesStore {
  private readonly writes = new GroupCommit<NewRow, InsertOutcome | undefined>((rows, deadline) =>
    this.insertBatch(rows, deadline),
  );

  constructor(@InjectKysely() private readonly db: MessagingDb) {}

  async createChannel(agentId: string): Promise<ChannelView> {
    const row = await this.db
      .insertInto('channels')
      .values({ agent_id: agentId })
      .returning(['id', 'agent_id', 'created_at'])
      .executeTakeFirstOrThrow();
    return { id: row.id, agent_id: row.agent_id, created_at: row.created_at.toISOString() };
  }

  /**
   * Store an envelope. Without a channel id (a chat message starting a
   * conversation) the channel is made with it, atomically; a re-post makes no
   * channel. Concurrent inserts share one statement and one commit.
   */
  async insert(
    envelope: Envelope,
    { sender = null, traceId, fingerprint, key, deadline }: PostedWith = {},
  ): Promise<InsertOutcome> {
    const channelId = envelope.channel_id ?? randomUUID();
    const row: NewRow = {
      id: envelope.id,
      channelId,
      newChannel: envelope.channel_id === undefined,
      agentId: envelope.agent_id,
      type: envelope.type,
      inReplyTo: envelope.type === 'agent_reply' ? envelope.in_reply_to : null,
      json: JSON.stringify(envelope.channel_id ? envelope : { ...envelope, channel_id: channelId }),
      sender,
      traceId: traceId ?? null,
      fingerprint: fingerprint ?? null,
      keyRef: key?.ref ?? null,
    };
    // Refused alone, here: in the group commit it would fail every row of its batch.
    if (jsonHoldsUnstorableText(row.json))
      throw new InvalidRequestError(`the ${envelope.type}: ${UNSTORABLE_TEXT_REFUSAL}`);
    const first =
      (await this.writes.submit(row, deadline)) ?? (await this.explainNoInsert(envelope, row, deadline, key));
    if (first.kind !== 'key_let_go') return first;
    // The key's holder let go of it (README.md, "One key, one posting"): this posting takes it.
    return (await this.writes.submit(row, deadline)) ?? this.explainNoInsert(envelope, row, deadline);
  }

  /** The posting lets go of its key (ForgetKey); true when it held one. */
  async forgetKey(messageId: string): Promise<boolean> {
    const { numUpdatedRows } = await this.db
      .updateTable('messages')
      .set({ key_ref: null })
      .where('id', '=', messageId)
      .where('key_ref', 'is not', null)
      .executeTakeFirst();
    return numUpdatedRows > 0n;
  }

  /** One batch, one statement: messages on new channels and on existing ones alike. */
  private async insertBatch(
    rows: NewRow[],
    deadline: HoldDeadline | undefined,
  ): Promise<(InsertOutcome | undefined)[]> {
    const inserted = new Map<string, Row>();
    const result = await insertBatchStatement(rows).execute(holdingUntil(this.db, deadline));
    // PostgreSQL answers with lower-case UUIDs; a sender may have written capitals.
    for (const row of result.rows) inserted.set(row.id, row);
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
    // The latest `limit`, oldest first.
    const rows = await this.db
      .selectFrom((db) =>
        db
          .selectFrom('messages')
          .select(['seq', 'envelope'])
          .where('channel_id', '=', channelId)
          .orderBy('seq', 'desc')
          .limit(limit)
          .as('latest'),
      )
      .select(['seq', 'envelope'])
      .orderBy('seq', 'asc')
      .execute();
    if (rows.length === 0 && !(await this.channelExists(channelId))) return undefined;
    return rows.map((row) => ({ seq: Number(row.seq), envelope: row.envelope }));
  }

  /** Whether message M is on channel C, and its reply if one is stored. `deadline`: as `PostedWith`'s. */
  async findReply(
    channelId: string,
    messageId: string,
    deadline?: HoldDeadline,
  ): Promise<{ messageExists: boolean; reply?: AgentReply }> {
    // Two scalar subqueries in one row: SQL reads better than the builder here.
    const { rows } = await sql<{ message_exists: boolean; reply: AgentReply | null }>`
      SELECT
        EXISTS (SELECT 1 FROM messages WHERE id = ${messageId} AND channel_id = ${channelId}) AS message_exists,
        (SELECT envelope FROM messages
          WHERE channel_id = ${channelId} AND in_reply_to = ${messageId} AND type = 'agent_reply') AS reply`.execute(
      holdingUntil(this.db, deadline),
    );
    return { messageExists: rows[0].message_exists, reply: rows[0].reply ?? undefined };
  }

  /** The agent of a channel; undefined when there is no such channel. `deadline`: as `PostedWith`'s. */
  async channelAgent(channelId: string, deadline?: HoldDeadline): Promise<string | undefined> {
    const row = await holdingUntil(this.db, deadline)
      .selectFrom('channels')
      .select('agent_id')
      .where('id', '=', channelId)
      .executeTakeFirst();
    return row?.agent_id;
  }

  /** Who sent a stored message (null for rows from before senders were stamped). */
  async senderOf(messageId: string): Promise<string | null | undefined> {
    const row = await this.db.selectFrom('messages').select('sender').where('id', '=', messageId).executeTakeFirst();
    return row ? row.sender : undefined;
  }

  private async channelExists(channelId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('channels')
      .select(sql<number>`1`.as('found'))
      .where('id', '=', channelId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Why an envelope was not stored (the rare path: a re-post, a bad channel, a second reply). A
   * re-post whose fingerprint differs from the stored one's is `reused`; either without one joins.
   * A keyed chat_message whose id is new but whose key another posting holds joins that one, unless
   * the holder is older than the key's time to live or the post renews the key: then the holder
   * lets go (`key_let_go`), and the insert is tried once more (`key` is passed that first time only).
   */
  private async explainNoInsert(
    envelope: Envelope,
    row: NewRow,
    deadline: HoldDeadline | undefined,
  ): Promise<InsertOutcome>;
  private async explainNoInsert(
    envelope: Envelope,
    row: NewRow,
    deadline: HoldDeadline | undefined,
    key: PostingKey | undefined,
  ): Promise<InsertOutcome | KeyLetGo>;
  private async explainNoInsert(
    envelope: Envelope,
    row: NewRow,
    deadline: HoldDeadline | undefined,
    key?: PostingKey,
  ): Promise<InsertOutcome | KeyLetGo> {
    // The rare path: held to the caller's deadline as the insert was.
    const db = holdingUntil(this.db, deadline);
    const same = await this.existing(db, 'id', envelope.id);
    if (same) return joinOrRefuse(same, row.fingerprint, envelope.type === 'chat_message');
    if (row.keyRef) {
      const holder = await this.existing(db, 'key_ref', row.keyRef, key && !key.renews ? key.ttl_s : undefined);
      if (holder && key && (key.renews || holder.stale)) {
        await db
          .updateTable('messages')
          .set({ key_ref: null })
          .where('id', '=', holder.id)
          .where('key_ref', '=', row.keyRef)
          .execute();
        return { kind: 'key_let_go' };
      }
      if (holder) {
        const joined = joinOrRefuse(holder, row.fingerprint, true);
        if (joined.kind !== 'duplicate') return joined;
        const stored = await db
          .selectFrom('messages')
          .select('envelope')
          .where('id', '=', holder.id)
          .executeTakeFirst();
        return { ...joined, posting: { ...joined.posting!, envelope: stored?.envelope as ChatMessage | undefined } };
      }
      // Let go between the insert and this look: take it.
      if (key) return { kind: 'key_let_go' };
    }
    const inReplyTo = row.inReplyTo;
    if (!envelope.channel_id) return { kind: 'no_channel' };
    const channel = await this.channelAgent(envelope.channel_id, deadline);
    if (channel === undefined) return { kind: 'no_channel' };
    if (inReplyTo && channel !== envelope.agent_id) return { kind: 'wrong_agent' };
    if (inReplyTo) {
      const row = await db
        .selectFrom('messages')
        .select(['seq', 'channel_id'])
        .where('channel_id', '=', envelope.channel_id)
        .where('in_reply_to', '=', inReplyTo)
        .where('type', '=', 'agent_reply')
        .executeTakeFirst();
      if (row) return { kind: 'already_answered', channelId: row.channel_id, seq: Number(row.seq) };
    }
    return { kind: 'no_message_to_answer' };
  }

  /** The stored chat_message (or reply) with this id, or holding this key; `stale`: older than `ttlSeconds`. */
  private async existing(
    db: MessagingDb,
    by: 'id' | 'key_ref',
    value: string,
    ttlSeconds?: number,
  ): Promise<(Holder & { stale: boolean }) | undefined> {
    const row = await db
      .selectFrom('messages')
      .select([
        'id',
        'seq',
        'channel_id',
        'fingerprint',
        sql<string>`envelope->>'created_at'`.as('posted_at'),
        sql<string | null>`envelope->>'call_id'`.as('call_id'),
        (ttlSeconds === undefined
          ? sql<boolean>`false`
          : sql<boolean>`created_at < now() - make_interval(secs => ${ttlSeconds})`
        ).as('stale'),
      ])
      .where(by, '=', value)
      .executeTakeFirst();
    return (
      row && {
        id: row.id,
        channelId: row.channel_id,
        seq: Number(row.seq),
        fingerprint: row.fingerprint,
        createdAt: row.posted_at,
        callId: row.call_id,
        stale: row.stale,
      }
    );
  }
}

/**
 * A re-post of a stored envelope: joined, or refused when both carry fingerprints that differ. A
 * chat_message's duplicate names the posting it joined.
 */
function joinOrRefuse(holder: Holder, fingerprint: string | null, isPosting: boolean): InsertOutcome {
  const reused =
    fingerprint !== null && holder.fingerprint !== null && holder.fingerprint.toString('hex') !== fingerprint;
  if (reused) return { kind: 'reused' };
  const joined = { kind: 'duplicate' as const, channelId: holder.channelId, seq: holder.seq };
  if (!isPosting) return joined;
  return {
    ...joined,
    posting: { id: holder.id, createdAt: holder.createdAt, ...(holder.callId !== null && { callId: holder.callId }) },
  };
}
