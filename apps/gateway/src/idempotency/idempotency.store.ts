import { Injectable } from '@nestjs/common';
import type { ChatMessage } from '@mcpgw/contracts';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import type { GatewayDb } from '../database/schema';

export interface RecordKey {
  agentId: string;
  caller: string;
  key: string;
}

export interface IdempotencyRecord {
  fingerprint: Buffer;
  toolId: string;
  message: ChatMessage;
  /** The exact result text sent for this key, once a call completed. */
  result: string | null;
  /** The surface that claimed the key: `result` is in its shape (null: an MCP surface's, from before REST). */
  surface: string | null;
}

/** A record as an operator sees it: its key and times, and whether retries get a stored result. */
export interface RecordView {
  key: string;
  created_at: Date;
  completed_at: Date | null;
  expires_at: Date;
  replayable: boolean;
}

/** Writes to make in the transaction that settles a record (the webhook outbox: webhooks/README.md). */
export type AlsoInTransaction = (tx: GatewayDb) => Promise<unknown>;

const PURGE_BATCH = 1000;
const now = sql<Date>`now()`;

/**
 * Idempotency records. The primary key (agent, caller, key) does the race work:
 * of concurrent first calls exactly one inserts; an expired record is taken over
 * under the row lock of the same statement. No read-then-write.
 */
@Injectable()
export class IdempotencyStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /** Insert (or take over an expired) record; true when this caller now owns it. */
  async claim(id: RecordKey, record: Omit<IdempotencyRecord, 'result'>, ttlSeconds: number): Promise<boolean> {
    const claimed = await this.db
      .insertInto('idempotency_records')
      .values({
        agent_id: id.agentId,
        caller: id.caller,
        key: id.key,
        fingerprint: record.fingerprint,
        tool_id: record.toolId,
        message: JSON.stringify(record.message),
        surface: record.surface,
        expires_at: sql<Date>`now() + make_interval(secs => ${ttlSeconds})`,
      })
      .onConflict((oc) =>
        oc
          .columns(['agent_id', 'caller', 'key'])
          .doUpdateSet((eb) => ({
            fingerprint: eb.ref('excluded.fingerprint'),
            tool_id: eb.ref('excluded.tool_id'),
            message: eb.ref('excluded.message'),
            surface: eb.ref('excluded.surface'),
            result: eb.lit(null),
            created_at: now,
            completed_at: eb.lit(null),
            expires_at: eb.ref('excluded.expires_at'),
          }))
          .where('idempotency_records.expires_at', '<=', now),
      )
      .returning(sql<number>`1`.as('claimed'))
      .executeTakeFirst();
    return claimed !== undefined;
  }

  async find(id: RecordKey): Promise<IdempotencyRecord | undefined> {
    const row = await this.db
      .selectFrom('idempotency_records')
      .select(['fingerprint', 'tool_id', 'message', 'result', 'surface'])
      .where('agent_id', '=', id.agentId)
      .where('caller', '=', id.caller)
      .where('key', '=', id.key)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return (
      row && {
        fingerprint: row.fingerprint,
        toolId: row.tool_id,
        message: row.message,
        result: row.result,
        surface: row.surface,
      }
    );
  }

  /**
   * The record whose call was message `messageId` of this agent and caller, if
   * it is still kept (`admin call show`): one caller's records, by the primary
   * key's prefix.
   */
  async ofMessage(agentId: string, caller: string, messageId: string): Promise<RecordView | undefined> {
    return this.db
      .selectFrom('idempotency_records')
      .select(['key', 'created_at', 'completed_at', 'expires_at', sql<boolean>`result IS NOT NULL`.as('replayable')])
      .where('agent_id', '=', agentId)
      .where('caller', '=', caller)
      .where(sql`message->>'id'`, '=', messageId)
      .executeTakeFirst();
  }

  /**
   * Store the result unless another request did first; either way, the stored
   * text. `also` runs in the same transaction, only when this request stored it.
   */
  async complete(id: RecordKey, result: string, also?: AlsoInTransaction): Promise<string> {
    const stored = also
      ? await this.db.transaction().execute(async (tx) => {
          const row = await this.store(tx, id, result);
          if (row) await also(tx);
          return row;
        })
      : await this.store(this.db, id, result);
    if (stored?.result != null) return stored.result;
    return (await this.find(id))?.result ?? result;
  }

  private store(db: GatewayDb, id: RecordKey, result: string) {
    return db
      .updateTable('idempotency_records')
      .set({ result, completed_at: now })
      .where('agent_id', '=', id.agentId)
      .where('caller', '=', id.caller)
      .where('key', '=', id.key)
      .where('result', 'is', null)
      .returning('result')
      .executeTakeFirst();
  }

  /** Forget an unfinished record (its call was cancelled), so the key can be claimed again; `also` in its transaction. */
  async release(id: RecordKey, also?: AlsoInTransaction): Promise<void> {
    if (also) {
      await this.db.transaction().execute(async (tx) => {
        await this.forget(tx, id);
        await also(tx);
      });
    } else await this.forget(this.db, id);
  }

  private async forget(db: GatewayDb, id: RecordKey): Promise<void> {
    await db
      .deleteFrom('idempotency_records')
      .where('agent_id', '=', id.agentId)
      .where('caller', '=', id.caller)
      .where('key', '=', id.key)
      .where('result', 'is', null)
      .execute();
  }

  /** Delete one batch of expired records; returns how many. `ctid` is not a column of the schema, hence SQL. */
  async purgeExpired(): Promise<number> {
    const { numAffectedRows } = await sql`
      DELETE FROM idempotency_records WHERE ctid IN (
        SELECT ctid FROM idempotency_records WHERE expires_at <= now() LIMIT ${sql.lit(PURGE_BATCH)})`.execute(this.db);
    return Number(numAffectedRows ?? 0);
  }
}
