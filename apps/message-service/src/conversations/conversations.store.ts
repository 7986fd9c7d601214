import { Injectable } from '@nestjs/common';
import {
  ATTEMPTS_EXHAUSTED,
  UnavailableError,
  callIdOf,
  type CallOutcome,
  type ChannelSummary,
  type Envelope,
  type ListCallsRequest,
  type ListChannelsRequest,
  type ListedCall,
  type StoredCall,
} from '@mcpgw/contracts';
import { InjectKysely } from '@mcpgw/persistence';
import { sql, type RawBuilder } from 'kysely';
import type { MessagingDb } from '../database/schema';

/*
 * A chat_message `m` with its reply `r`, as every view of calls reads them
 * (`ms.calls.find`, `ms.calls.list`, `ms.channels.show`): one SQL for the
 * join, the columns and how a call ended, so that the views cannot disagree.
 */

/** The reply of chat_message `m`, if stored: one row at most (the unique index messages_one_reply). */
const REPLY_JOIN = sql`LEFT JOIN messages r
          ON r.channel_id = m.channel_id AND r.in_reply_to = m.id AND r.type = 'agent_reply'`;

/**
 * How the call of `m` ended (`CallOutcome`), from its reply `r`: the fields
 * `isAttemptsExhausted`, `protocolErrorOf` and `is_error` are read from, in
 * the order the gateway's `call show` always judged them.
 */
const CALL_OUTCOME = sql<CallOutcome>`CASE
         WHEN r.id IS NULL THEN 'no_reply'
         WHEN r.envelope->'meta'->>'outcome' = ${ATTEMPTS_EXHAUSTED} THEN 'failed'
         WHEN jsonb_typeof(r.envelope->'meta'->'protocol_error'->'code') = 'number'
          AND jsonb_typeof(r.envelope->'meta'->'protocol_error'->'message') = 'string' THEN 'failed'
         WHEN r.envelope->'is_error' = 'true'::jsonb THEN 'tool_error'
         ELSE 'ok'
       END`;

/** A call's message and its reply, as `CALL_COLUMNS` selects them. */
interface CallRow {
  seq: string;
  channel_id: string;
  envelope: Envelope;
  sender: string | null;
  created_at: Date;
  trace_id: string | null;
  reply_seq: string | null;
  reply: Envelope | null;
  reply_sender: string | null;
  reply_at: Date | null;
  outcome: CallOutcome;
}

/** The columns of a CallRow, from `m` and `r` (REPLY_JOIN). */
const CALL_COLUMNS = sql`m.seq, m.channel_id, m.envelope, m.sender, m.created_at, m.trace_id,
       r.seq AS reply_seq, r.envelope AS reply, r.sender AS reply_sender, r.created_at AS reply_at,
       ${CALL_OUTCOME} AS outcome`;

function stored(seq: string, channelId: string, envelope: Envelope, sender: string | null, at: Date) {
  return { seq: Number(seq), channel_id: channelId, envelope, sender, stored_at: at.toISOString() };
}

/** A CallRow as the bus carries it. */
function storedCall(row: CallRow): StoredCall {
  return {
    message: stored(row.seq, row.channel_id, row.envelope, row.sender, row.created_at),
    ...(row.reply && {
      reply: stored(row.reply_seq!, row.channel_id, row.reply, row.reply_sender, row.reply_at!),
    }),
    outcome: row.outcome,
    trace_id: row.trace_id,
  };
}

/** How long one of the operator's queries may run: a rare filter on a large table is refused, never a long scan. */
const STATEMENT_TIMEOUT_MS = 5_000;
/** PostgreSQL's `query_canceled` (statement_timeout). */
const QUERY_CANCELED = '57014';

interface ListedCallRow {
  seq: string;
  id: string;
  channel_id: string;
  call_id: string | null;
  agent_id: string;
  tool: string;
  caller_id: string;
  posted_at: string;
  created_at: Date;
  reply_at: Date | null;
  outcome: CallOutcome;
  trace_id: string | null;
}

interface ChannelRow {
  id: string;
  agent_id: string;
  created_at: Date;
  messages: number;
  last_at: Date | null;
  caller_id: string | null;
}

/**
 * The operator's reads of calls and channels (README.md beside this file),
 * newest first, a page at a time (`limit` rows, plus one to know whether
 * there are more). Indexes: messages_calls_by_agent, channels_by_agent,
 * channels_created_at, messages_channel_seq and the primary key.
 */
@Injectable()
export class ConversationsStore {
  constructor(@InjectKysely() private readonly db: MessagingDb) {}

  /**
   * The chat_messages of one call id, newest first, each with its reply once
   * stored (index messages_call_id). `messageId`: the message a gateway call id
   * is made from, so that messages stored before call ids are found too.
   */
  async findCall(callId: string, messageId: string | undefined, limit: number): Promise<StoredCall[]> {
    const { rows } = await sql<CallRow>`
      SELECT ${CALL_COLUMNS}
        FROM messages m
        ${REPLY_JOIN}
       WHERE m.type = 'chat_message'
         AND (m.envelope->>'call_id' = ${callId} ${messageId ? sql`OR m.id = ${messageId}` : sql``})
       ORDER BY m.seq DESC
       LIMIT ${limit}`.execute(this.db);
    return rows.map(storedCall);
  }

  /** Tool calls, newest first, with how each ended. */
  listCalls(filter: ListCallsRequest, limit: number): Promise<ListedCall[]> {
    const where = [
      sql`m.type = 'chat_message'`,
      sql`m.envelope->'tool_call' IS NOT NULL`,
      filter.agent_id !== undefined && sql`m.envelope->>'agent_id' = ${filter.agent_id}`,
      filter.tool !== undefined && sql`m.envelope->'tool_call'->>'name' = ${filter.tool}`,
      filter.caller_id !== undefined && sql`m.envelope->'sender'->>'id' = ${filter.caller_id}`,
      filter.outcome !== undefined && sql`${CALL_OUTCOME} = ${filter.outcome}`,
      filter.before !== undefined && sql`m.seq < ${filter.before}`,
    ];
    return this.bounded('calls', async (db) => {
      const { rows } = await sql<ListedCallRow>`
        SELECT m.seq, m.id, m.channel_id, m.envelope->>'call_id' AS call_id, m.envelope->>'agent_id' AS agent_id,
               m.envelope->'tool_call'->>'name' AS tool, m.envelope->'sender'->>'id' AS caller_id,
               m.envelope->>'created_at' AS posted_at, m.created_at, m.trace_id,
               r.created_at AS reply_at, ${CALL_OUTCOME} AS outcome
          FROM messages m
          ${REPLY_JOIN}
         WHERE ${and(where)}
         ORDER BY m.seq DESC
         LIMIT ${limit}`.execute(db);
      return rows.map((row) => ({
        seq: Number(row.seq),
        call_id: row.call_id ?? callIdOf(row.id),
        message_id: row.id,
        channel_id: row.channel_id,
        agent_id: row.agent_id,
        tool: row.tool,
        caller_id: row.caller_id,
        posted_at: row.posted_at,
        stored_at: row.created_at.toISOString(),
        outcome: row.outcome,
        reply_stored_at: row.reply_at?.toISOString() ?? null,
        trace_id: row.trace_id,
      }));
    });
  }

  /** Channels, newest first; `before`: only those older than that channel (none when it is gone). */
  listChannels(filter: ListChannelsRequest, limit: number): Promise<ChannelSummary[]> {
    const where = [
      filter.agent_id !== undefined && sql`c.agent_id = ${filter.agent_id}`,
      filter.before !== undefined &&
        sql`(c.created_at, c.id) < (SELECT b.created_at, b.id FROM channels b WHERE b.id = ${filter.before})`,
    ];
    return this.bounded('channels', (db) => this.channels(db, and(where), limit));
  }

  /** One channel with its counts; undefined when there is no such channel. */
  async channel(channelId: string): Promise<ChannelSummary | undefined> {
    const [channel] = await this.channels(this.db, sql`c.id = ${channelId}`, 1);
    return channel;
  }

  /** A channel's chat_messages with their replies, newest first. */
  async channelCalls(channelId: string, before: number | undefined, limit: number): Promise<StoredCall[]> {
    const { rows } = await sql<CallRow>`
      SELECT ${CALL_COLUMNS}
        FROM messages m
        ${REPLY_JOIN}
       WHERE m.channel_id = ${channelId} AND m.type = 'chat_message'
         ${before === undefined ? sql`` : sql`AND m.seq < ${before}`}
       ORDER BY m.seq DESC
       LIMIT ${limit}`.execute(this.db);
    return rows.map(storedCall);
  }

  private async channels(db: MessagingDb, where: RawBuilder<unknown>, limit: number): Promise<ChannelSummary[]> {
    const { rows } = await sql<ChannelRow>`
      SELECT c.id, c.agent_id, c.created_at, s.messages, s.last_at, f.caller_id
        FROM channels c
        CROSS JOIN LATERAL (
          SELECT count(*)::int AS messages, max(created_at) AS last_at FROM messages WHERE channel_id = c.id
        ) s
        LEFT JOIN LATERAL (
          SELECT envelope->'sender'->>'id' AS caller_id FROM messages
           WHERE channel_id = c.id AND type = 'chat_message' ORDER BY seq LIMIT 1
        ) f ON true
       WHERE ${where}
       ORDER BY c.created_at DESC, c.id DESC
       LIMIT ${limit}`.execute(db);
    return rows.map((row) => ({
      id: row.id,
      agent_id: row.agent_id,
      created_at: row.created_at.toISOString(),
      messages: row.messages,
      last_message_at: row.last_at?.toISOString() ?? null,
      caller_id: row.caller_id,
    }));
  }

  /** A read under a statement timeout: a filter that matches rarely on a large table fails fast, `unavailable`. */
  private async bounded<T>(what: string, read: (db: MessagingDb) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction().execute(async (tx) => {
        await sql`SET LOCAL statement_timeout = ${sql.lit(STATEMENT_TIMEOUT_MS)}`.execute(tx);
        return read(tx);
      });
    } catch (error) {
      if ((error as { code?: string }).code !== QUERY_CANCELED) throw error;
      throw new UnavailableError(
        `listing ${what} took over ${STATEMENT_TIMEOUT_MS / 1000} s: narrow it (an agent, a page further back)`,
      );
    }
  }
}

/** The conditions that apply, joined with AND (TRUE when none). */
function and(conditions: (RawBuilder<unknown> | false)[]): RawBuilder<unknown> {
  const given = conditions.filter((c): c is RawBuilder<unknown> => c !== false);
  return given.length ? sql.join(given, sql` AND `) : sql`TRUE`;
}
