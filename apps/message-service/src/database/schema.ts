import type { Envelope } from '@mcpgw/contracts';
import type { Generated, Int8, Json, Timestamp } from '@mcpgw/persistence';
import type { Kysely } from 'kysely';

/**
 * The message service's tables (schema `messaging`) as the migration beside
 * this file makes them, for Kysely. Change a migration, change this file.
 */

export interface ChannelsTable {
  id: Generated<string>;
  agent_id: string;
  created_at: Generated<Timestamp>;
}

export interface MessagesTable {
  seq: Generated<Int8>;
  id: string;
  channel_id: string;
  /** CHECK (type IN ('chat_message', 'agent_reply')). */
  type: Envelope['type'];
  in_reply_to: string | null;
  envelope: Json<Envelope>;
  /** Who sent it, as the bus vouched: `gateway`, `agent:<id>`, `rest` (null: stored before this column). */
  sender: string | null;
  /** The trace id of the post that stored a chat_message (its `traceparent`); null without one. */
  trace_id: string | null;
  /** A keyed call's fingerprint (migration 1765100000000); null when its post carried none. */
  fingerprint: Buffer | null;
  /** A keyed call's key while this posting holds it (migration 1765200000000); null otherwise. */
  key_ref: string | null;
  created_at: Generated<Timestamp>;
}

export interface MessagingTables {
  channels: ChannelsTable;
  messages: MessagesTable;
}

/** What the message service's store injects (`@InjectKysely()`). */
export type MessagingDb = Kysely<MessagingTables>;
