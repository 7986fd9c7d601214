import { Injectable } from '@nestjs/common';
import { GroupCommit, InjectKysely, PREPARED, holdingUntil, type HoldDeadline } from '@mcpgw/persistence';
import { sql } from 'kysely';
import type { GatewayDb } from '../database/schema';
import type { RecordedMessage } from './recorded-message';

export interface RecordKey {
  agentId: string;
  caller: string;
  key: string;
}

export interface IdempotencyRecord {
  fingerprint: Buffer;
  toolId: string;
  /** The call's chat_message, or its id and time alone when the key names it (recorded-message.ts). */
  message: RecordedMessage;
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
  /** The surface that claimed it (an A2A record, rare: README.md, "A2A's messages claim nothing"). */
  surface: string | null;
}

/** Writes to make in the transaction that settles a record (the webhook outbox: webhooks/README.md). */
export type AlsoInTransaction = (tx: GatewayDb) => Promise<unknown>;

/** How a record is completed or released: with what else in its transaction, and until when it may wait for the database. */
export interface Settling {
  also?: AlsoInTransaction;
  deadline?: HoldDeadline;
}

const PURGE_BATCH = 1000;
/** Claims or completions written together at most; more wait for the next statement. */
const GROUP_BATCH = 500;
const now = sql<Date>`now()`;

/**
 * Idempotency records. The primary key (agent, caller, key) does the race work:
 * of concurrent first calls exactly one inserts; an expired record is taken over
 * under the row lock of the same statement. No read-then-write.
 */
@Injectable()
export class IdempotencyStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /**
   * Claims and completions of concurrent calls, each a group commit: what
   * arrives while one statement is on its way goes in the next, one
   * statement for many calls (a keyed call cost two statements of its own).
   */
  private readonly claims = new GroupCommit<Claim, Claimed>((batch, deadline) => this.claimMany(batch, deadline), {
    maxBatch: GROUP_BATCH,
  });
  private readonly completions = new GroupCommit<Completion, string | undefined>(
    (batch, deadline) => this.completeMany(batch, deadline),
    { maxBatch: GROUP_BATCH },
  );

  /**
   * Insert (or take over an expired) record: `new` or `taken_over` when this caller now owns it,
   * false when another does. `deadline` here and below: the call's, which its statements wait
   * for at most while the database is away (none: DB_OUTAGE_HOLD_MS).
   */
  claim(
    id: RecordKey,
    record: Omit<IdempotencyRecord, 'result'>,
    ttlSeconds: number,
    deadline?: HoldDeadline,
  ): Promise<Claimed> {
    return this.claims.submit({ id, record, ttlSeconds }, deadline);
  }

  /**
   * One statement for a batch of claims. The same key twice in a batch is
   * claimed by the first only (one INSERT … ON CONFLICT cannot touch a row
   * twice); the other finds the record, as a racing request on another
   * replica would.
   */
  private async claimMany(batch: Claim[], deadline: HoldDeadline | undefined): Promise<Claimed[]> {
    const first = firstOfEachKey(batch, (claim) => claim.id);
    const rows = first.map((i) => batch[i]);
    // The messages as one JSON array, not a text[], whose literal costs an escaping pass over
    // each in node-postgres (docs/benchmarks.md, "The envelopes as one JSON parameter").
    // `xmax = 0`: the row was inserted, not an expired one updated (taken over).
    const { rows: claimed } = await sql<KeyRow & { inserted: boolean }>`${PREPARED}
      INSERT INTO idempotency_records AS r
        (agent_id, caller, key, fingerprint, tool_id, message, surface, expires_at)
      SELECT v.agent_id, v.caller, v.key, decode(v.fingerprint, 'hex'), v.tool_id, m.message::jsonb, v.surface,
             now() + make_interval(secs => v.ttl)
        FROM unnest(${rows.map((c) => c.id.agentId)}::text[], ${rows.map((c) => c.id.caller)}::text[],
                    ${rows.map((c) => c.id.key)}::text[], ${rows.map((c) => c.record.fingerprint.toString('hex'))}::text[],
                    ${rows.map((c) => c.record.toolId)}::uuid[], ${rows.map((c) => c.record.surface)}::text[],
                    ${rows.map((c) => c.ttlSeconds)}::float8[])
               WITH ORDINALITY AS v(agent_id, caller, key, fingerprint, tool_id, surface, ttl, n)
        JOIN json_array_elements(${JSON.stringify(rows.map((c) => c.record.message))}::json)
               WITH ORDINALITY AS m(message, n) ON m.n = v.n
      ON CONFLICT (agent_id, caller, key) DO UPDATE SET
        fingerprint = excluded.fingerprint, tool_id = excluded.tool_id, message = excluded.message,
        surface = excluded.surface, result = NULL, created_at = now(), completed_at = NULL,
        expires_at = excluded.expires_at
      WHERE r.expires_at <= now()
      RETURNING r.agent_id, r.caller, r.key, (r.xmax = 0) AS inserted`.execute(holdingUntil(this.db, deadline));
    const won = new Map(claimed.map((row) => [keyOf(row), row.inserted ? ('new' as const) : ('taken_over' as const)]));
    const owners = new Set(first);
    return batch.map((claim, i) => (owners.has(i) && won.get(keyOf(claim.id))) || false);
  }

  async find(id: RecordKey, deadline?: HoldDeadline): Promise<IdempotencyRecord | undefined> {
    const row = await holdingUntil(this.db, deadline)
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
      .select([
        'key',
        'created_at',
        'completed_at',
        'expires_at',
        'surface',
        sql<boolean>`result IS NOT NULL`.as('replayable'),
      ])
      .where('agent_id', '=', agentId)
      .where('caller', '=', caller)
      .where(sql`message->>'id'`, '=', messageId)
      .executeTakeFirst();
  }

  /**
   * Store the result unless another request did first; either way, the stored
   * text. `also` runs in the same transaction, only when this request stored it
   * (its own transaction: the webhook outbox's row goes with this record only);
   * without it, completions are group-committed.
   */
  async complete(id: RecordKey, result: string, { also, deadline }: Settling = {}): Promise<string> {
    const stored = also
      ? (
          await holdingUntil(this.db, deadline)
            .transaction()
            .execute(async (tx) => {
              const row = await this.store(tx, id, result);
              if (row) await also(tx);
              return row;
            })
        )?.result
      : await this.completions.submit({ id, result }, deadline);
    if (stored != null) return stored;
    return (await this.find(id, deadline))?.result ?? result;
  }

  /**
   * One statement for a batch of completions: each gets the result its record holds now, if this batch stored one.
   *
   * Not `PREPARED`, so that PostgreSQL plans each one for the table as it is. An update joined to its
   * input has no plan that is an index probe whatever the table holds: the generic plan a prepared
   * statement keeps, made while the table was small (a gateway started on a quiet database), joins a
   * sequential scan of every record, and every completion after it read the whole table. That made a
   * keyed call's cost grow with the records the day kept (docs/benchmarks.md, "A completion that read
   * every record"); planned each time, the update probes the primary key.
   */
  private async completeMany(batch: Completion[], deadline: HoldDeadline | undefined): Promise<(string | undefined)[]> {
    const rows = firstOfEachKey(batch, (completion) => completion.id).map((i) => batch[i]);
    const { rows: stored } = await sql<KeyRow & { result: string }>`
      UPDATE idempotency_records AS r SET result = v.result, completed_at = now()
        FROM unnest(${rows.map((c) => c.id.agentId)}::text[], ${rows.map((c) => c.id.caller)}::text[],
                    ${rows.map((c) => c.id.key)}::text[], ${rows.map((c) => c.result)}::text[])
          AS v(agent_id, caller, key, result)
       WHERE r.agent_id = v.agent_id AND r.caller = v.caller AND r.key = v.key AND r.result IS NULL
      RETURNING r.agent_id, r.caller, r.key, r.result`.execute(holdingUntil(this.db, deadline));
    const results = new Map(stored.map((row) => [keyOf(row), row.result]));
    return batch.map((completion) => results.get(keyOf(completion.id)));
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
  async release(id: RecordKey, { also, deadline }: Settling = {}): Promise<void> {
    const db = holdingUntil(this.db, deadline);
    if (also) {
      await db.transaction().execute(async (tx) => {
        await this.forget(tx, id);
        await also(tx);
      });
    } else await this.forget(db, id);
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

/** A claim's outcome: this caller owns a record it made, or one it took over from an expired one, or not. */
export type Claimed = 'new' | 'taken_over' | false;

interface Claim {
  id: RecordKey;
  record: Omit<IdempotencyRecord, 'result'>;
  ttlSeconds: number;
}

interface Completion {
  id: RecordKey;
  result: string;
}

interface KeyRow {
  agent_id: string;
  caller: string;
  key: string;
}

/** A record key as one string, NUL between the parts (each part is a PostgreSQL text, which never holds a NUL). */
function keyOf(id: RecordKey | KeyRow): string {
  return 'agentId' in id ? `${id.agentId}\0${id.caller}\0${id.key}` : `${id.agent_id}\0${id.caller}\0${id.key}`;
}

/** The indexes of the first item of each record key in a batch, in order. */
function firstOfEachKey<T>(batch: T[], idOf: (item: T) => RecordKey): number[] {
  const seen = new Set<string>();
  return batch.flatMap((item, i) => {
    const key = keyOf(idOf(item));
    if (seen.has(key)) return [];
    seen.add(key);
    return [i];
  });
}
