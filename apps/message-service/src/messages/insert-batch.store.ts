import type { Envelope } from '@mcpgw/contracts';
import { PREPARED } from '@mcpgw/persistence';
import { sql } from 'kysely';

/** What an insert returns per stored row (`seq` is a bigint, read as text). */
export interface Row {
  id: string;
  seq: string;
  channel_id: string;
}

/** An envelope as one row of a batched insert. */
export interface NewRow {
  id: string;
  channelId: string;
  /** The channel is made with this message (it starts a conversation). */
  newChannel: boolean;
  agentId: string;
  type: Envelope['type'];
  inReplyTo: string | null;
  json: string;
  /** Who sent it, as the bus vouched (`gateway`, `agent:<id>`, `rest`). */
  sender: string | null;
  /** The trace id its post carried (chat messages; null without one). */
  traceId: string | null;
  /** A keyed call's fingerprint, hex (chat messages; null without one). */
  fingerprint: string | null;
  /** A keyed call's key ref (chat messages; null without one). */
  keyRef: string | null;
}

/**
 * One batch in one statement (one commit): messages that start conversations,
 * with their channels, and messages and replies on existing channels, side by
 * side as data-modifying CTEs over unnest of one array per column. SQL, not the
 * builder.
 *
 * On a new channel, a message id already stored makes no channel and no row
 * (the caller then reports the original). On an existing channel, a row is
 * skipped when its channel does not exist, when it is a reply of an agent other
 * than the channel's, when it answers a message that is not on that channel, or
 * when its id (or a reply to the same message) is already stored. The channel
 * is locked first (FOR KEY SHARE, the lock the foreign key takes anyway): a
 * channel being deleted by retention is waited for, then found gone
 * (`no_channel`), never a foreign-key error failing the whole batch.
 *
 * The envelopes go as one JSON array, not a `jsonb[]`: an array literal costs
 * node-postgres an escaping pass over every envelope's text and PostgreSQL
 * its parse, about 0.01 ms a row of the two processes' CPU together
 * (docs/benchmarks.md, "The envelopes as one JSON parameter"); the other
 * columns are short and stay one array each, joined to the envelopes by their
 * ordinal.
 *
 * Cheap to plan, because it runs at the rate of the calls (at one client every
 * call is two of these, each alone in its batch): a batch names only the CTEs
 * its rows need (new channels, existing ones, or both: three fixed texts), and
 * each is a `PREPARED` statement, parsed once per connection. PostgreSQL keeps
 * planning each execution (it finds the custom plans cheaper), so the lookups
 * are scalar subqueries on unique keys, which any plan runs as index probes:
 * as `EXISTS` a plan made while the tables were empty joined them by a
 * sequential scan (docs/benchmarks.md, "Prepared is not always cheaper").
 */
export function insertBatchStatement(rows: NewRow[]) {
  const [ids, channelIds, agentIds, types, inReplyTos, senders, traceIds, fingerprints, keyRefs, newChannels] = columns(
    rows,
    ['id', 'channelId', 'agentId', 'type', 'inReplyTo', 'sender', 'traceId', 'fingerprint', 'keyRef', 'newChannel'],
  );
  const envelopes = `[${rows.map((row) => row.json).join(',')}]`;
  const parts = [
    rows.some((row) => row.newChannel) ? ON_NEW_CHANNELS : undefined,
    rows.some((row) => !row.newChannel) ? ON_EXISTING_CHANNELS : undefined,
  ].filter((part) => part !== undefined);
  return sql<Row>`${PREPARED}
  WITH input AS (
    SELECT i.id, i.channel_id, i.agent_id, i.type, i.in_reply_to, e.envelope::jsonb AS envelope, i.sender, i.trace_id,
           decode(i.fingerprint, 'hex') AS fingerprint, i.key_ref, i.new_channel
      FROM unnest(${ids}::uuid[], ${channelIds}::uuid[], ${agentIds}::text[], ${types}::text[], ${inReplyTos}::uuid[], ${senders}::text[], ${traceIds}::text[], ${fingerprints}::text[], ${keyRefs}::uuid[], ${newChannels}::boolean[])
             WITH ORDINALITY AS i(id, channel_id, agent_id, type, in_reply_to, sender, trace_id, fingerprint, key_ref, new_channel, n)
      JOIN json_array_elements(${envelopes}::json) WITH ORDINALITY AS e(envelope, n) ON e.n = i.n
  ), ${sql.join(
    parts.map((part) => part.ctes),
    sql`, `,
  )}
  ${sql.join(
    parts.map((part) => part.rows),
    sql` UNION ALL `,
  )}`;
}

/** Chat messages that start conversations, with their channels: `on_new` holds what was stored. */
const ON_NEW_CHANNELS = {
  ctes: sql`channel AS (
    INSERT INTO channels (id, agent_id)
    SELECT i.channel_id, i.agent_id FROM input i
     WHERE i.new_channel AND (SELECT m.id FROM messages m WHERE m.id = i.id) IS NULL
       AND (i.key_ref IS NULL OR (SELECT m.id FROM messages m WHERE m.key_ref = i.key_ref) IS NULL)
    RETURNING id
  ), on_new AS (
    INSERT INTO messages (id, channel_id, type, envelope, sender, trace_id, fingerprint, key_ref)
    SELECT i.id, i.channel_id, 'chat_message', i.envelope, i.sender, i.trace_id, i.fingerprint, i.key_ref FROM input i JOIN channel ON channel.id = i.channel_id
    ON CONFLICT DO NOTHING
    RETURNING id, seq, channel_id
  )`,
  rows: sql`SELECT id, seq, channel_id FROM on_new`,
};

/** Messages and replies on existing channels: `on_existing` holds what was stored. */
const ON_EXISTING_CHANNELS = {
  ctes: sql`on_existing AS (
    INSERT INTO messages (id, channel_id, type, in_reply_to, envelope, sender, trace_id, fingerprint, key_ref)
    SELECT i.id, i.channel_id, i.type, i.in_reply_to, i.envelope, i.sender, i.trace_id, i.fingerprint, i.key_ref FROM input i
     WHERE NOT i.new_channel
       AND EXISTS (SELECT 1 FROM channels c WHERE c.id = i.channel_id AND (i.type <> 'agent_reply' OR c.agent_id = i.agent_id) FOR KEY SHARE)
       AND (i.in_reply_to IS NULL OR (SELECT m.channel_id FROM messages m WHERE m.id = i.in_reply_to) = i.channel_id)
    ON CONFLICT DO NOTHING
    RETURNING id, seq, channel_id
  )`,
  rows: sql`SELECT id, seq, channel_id FROM on_existing`,
};

/** The batch as one array per column, the way unnest takes it. */
function columns<K extends keyof NewRow>(rows: NewRow[], keys: K[]): NewRow[K][][] {
  return keys.map((key) => rows.map((row) => row[key]));
}
