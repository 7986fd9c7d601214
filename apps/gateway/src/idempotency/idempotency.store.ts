import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { ChatMessage } from '@mcpgw/contracts';
import { DataSource } from 'typeorm';

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
}

const PURGE_BATCH = 1000;

/**
 * Idempotency records. The primary key (agent, caller, key) does the race work:
 * of concurrent first calls exactly one inserts; an expired record is taken over
 * under the row lock of the same statement. No read-then-write.
 */
@Injectable()
export class IdempotencyStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Insert (or take over an expired) record; true when this caller now owns it. */
  async claim(id: RecordKey, record: Omit<IdempotencyRecord, 'result'>, ttlSeconds: number): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO idempotency_records (agent_id, caller, key, fingerprint, tool_id, message, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))
       ON CONFLICT (agent_id, caller, key) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, tool_id = EXCLUDED.tool_id, message = EXCLUDED.message,
             result = NULL, created_at = now(), completed_at = NULL, expires_at = EXCLUDED.expires_at
         WHERE idempotency_records.expires_at <= now()
       RETURNING 1`,
      [id.agentId, id.caller, id.key, record.fingerprint, record.toolId, JSON.stringify(record.message), ttlSeconds],
    );
    return rows.length === 1;
  }

  async find(id: RecordKey): Promise<IdempotencyRecord | undefined> {
    const [row] = await this.db.query(
      `SELECT fingerprint, tool_id, message, result FROM idempotency_records
        WHERE agent_id = $1 AND caller = $2 AND key = $3 AND expires_at > now()`,
      [id.agentId, id.caller, id.key],
    );
    return row && { fingerprint: row.fingerprint, toolId: row.tool_id, message: row.message, result: row.result };
  }

  /** Store the result unless another request did first; either way, the stored text. */
  async complete(id: RecordKey, result: string): Promise<string> {
    const [rows]: [{ result: string }[], number] = await this.db.query(
      `UPDATE idempotency_records SET result = $4, completed_at = now()
        WHERE agent_id = $1 AND caller = $2 AND key = $3 AND result IS NULL
       RETURNING result`,
      [id.agentId, id.caller, id.key, result],
    );
    if (rows[0]) return rows[0].result;
    return (await this.find(id))?.result ?? result;
  }

  /** Forget an unfinished record (its call was cancelled), so the key can be claimed again. */
  async release(id: RecordKey): Promise<void> {
    await this.db.query(
      `DELETE FROM idempotency_records WHERE agent_id = $1 AND caller = $2 AND key = $3 AND result IS NULL`,
      [id.agentId, id.caller, id.key],
    );
  }

  /** Delete one batch of expired records; returns how many. */
  async purgeExpired(): Promise<number> {
    const [, affected]: [unknown, number] = await this.db.query(
      `DELETE FROM idempotency_records WHERE ctid IN (
         SELECT ctid FROM idempotency_records WHERE expires_at <= now() LIMIT ${PURGE_BATCH})`,
    );
    return affected;
  }
}
