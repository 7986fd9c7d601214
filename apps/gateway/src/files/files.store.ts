import { Injectable } from '@nestjs/common';
import { InjectKysely, holdingUntil, type HoldDeadline } from '@mcpgw/persistence';
import { sql, type Selectable } from 'kysely';
import type { FilesTable, GatewayDb } from '../database/schema';

/** A file's metadata, as the service uses it. */
export interface FileRecord {
  id: string;
  agentId: string;
  caller: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string | null;
  state: 'pending' | 'uploading' | 'uploaded';
  createdAt: Date;
  expiresAt: Date;
}

export interface NewFile {
  id: string;
  agentId: string;
  caller: string;
  filename: string;
  contentType: string;
  size: number;
  expiresAt: Date;
}

/** What one caller (an API key, or a grant's task) of one agent may hold at once. */
export interface FileQuota {
  files: number;
  bytes: number;
}

/** Whether a new file fits; what the caller held before it either way. */
export interface QuotaCheck {
  ok: boolean;
  usage: FileQuota;
}

/** Expired files deleted per statement by the purge. */
export const PURGE_BATCH = 100;

/** Files' metadata in PostgreSQL (`files`); bytes are the storage backend's. */
@Injectable()
export class FilesStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /**
   * A new pending file, unless its caller's live files (pending ones count with
   * their declared size) would then be more than `quota` allows. One presign of
   * a caller at a time decides (a transaction-scoped advisory lock on the owner),
   * so two at once cannot both take the last room.
   */
  async createWithinQuota(file: NewFile, quota: FileQuota): Promise<QuotaCheck> {
    return this.db.transaction().execute(async (tx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`files:${file.agentId}:${file.caller}`}, 0))`.execute(
        tx,
      );
      const held = await tx
        .selectFrom('files')
        .select([sql<number>`count(*)::int`.as('files'), sql<string>`coalesce(sum(size), 0)::text`.as('bytes')])
        .where('agent_id', '=', file.agentId)
        .where('caller', '=', file.caller)
        .where('expires_at', '>', sql<Date>`now()`)
        .executeTakeFirstOrThrow();
      const usage = { files: held.files, bytes: Number(held.bytes) };
      if (usage.files + 1 > quota.files || usage.bytes + file.size > quota.bytes) return { ok: false, usage };
      await this.create(file, tx);
      return { ok: true, usage };
    });
  }

  async create(file: NewFile, db: GatewayDb = this.db): Promise<void> {
    await db
      .insertInto('files')
      .values({
        id: file.id,
        agent_id: file.agentId,
        caller: file.caller,
        filename: file.filename,
        content_type: file.contentType,
        size: file.size,
        expires_at: file.expiresAt,
      })
      .execute();
  }

  async find(id: string): Promise<FileRecord | undefined> {
    const row = await this.db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
    return row && record(row);
  }

  /** Several files at once (attachments of one call). */
  async findMany(ids: string[], deadline?: HoldDeadline): Promise<FileRecord[]> {
    if (ids.length === 0) return [];
    const rows = await holdingUntil(this.db, deadline).selectFrom('files').selectAll().where('id', 'in', ids).execute();
    return rows.map(record);
  }

  /**
   * Take a pending, unexpired file for its upload: one upload at a time, and
   * never again once uploaded. An upload older than `staleAfterMs` cannot still
   * be running (the HTTP request timeout ended it): its gateway died, and the
   * file may be taken again. Undefined when it is not (or no longer) free.
   */
  async claimUpload(id: string, staleAfterMs: number): Promise<FileRecord | undefined> {
    const row = await this.db
      .updateTable('files')
      .set({ state: 'uploading', upload_started_at: sql<Date>`now()` })
      .where('id', '=', id)
      .where((eb) =>
        eb.or([
          eb('state', '=', 'pending'),
          eb.and([
            eb('state', '=', 'uploading'),
            eb('upload_started_at', '<', sql<Date>`now() - make_interval(secs => ${staleAfterMs / 1000})`),
          ]),
        ]),
      )
      .where('expires_at', '>', sql<Date>`now()`)
      .returningAll()
      .executeTakeFirst();
    return row && record(row);
  }

  /** The upload completed: the file is usable until `expiresAt`. False when the row was purged meanwhile. */
  async completeUpload(id: string, sha256: Buffer, ttlSeconds: number): Promise<Date | undefined> {
    const row = await this.db
      .updateTable('files')
      .set({
        state: 'uploaded',
        sha256,
        uploaded_at: sql<Date>`now()`,
        expires_at: sql<Date>`now() + make_interval(secs => ${ttlSeconds})`,
      })
      .where('id', '=', id)
      .where('state', '=', 'uploading')
      .returning('expires_at')
      .executeTakeFirst();
    return row?.expires_at;
  }

  /** The upload failed: the file may be uploaded again (until it expires). */
  async releaseUpload(id: string): Promise<void> {
    await this.db
      .updateTable('files')
      .set({ state: 'pending' })
      .where('id', '=', id)
      .where('state', '=', 'uploading')
      .execute();
  }

  /** Up to PURGE_BATCH expired files, oldest expiry first. */
  async expiredBatch(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('files')
      .select('id')
      .where('expires_at', '<=', sql<Date>`now()`)
      .orderBy('expires_at')
      .limit(PURGE_BATCH)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Delete these rows, if still expired (their bytes are gone already). */
  async deleteExpired(ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await this.db
      .deleteFrom('files')
      .where('id', 'in', ids)
      .where('expires_at', '<=', sql<Date>`now()`)
      .executeTakeFirst();
    return Number(result.numDeletedRows ?? 0);
  }
}

function record(row: Selectable<FilesTable>): FileRecord {
  return {
    id: row.id,
    agentId: row.agent_id,
    caller: row.caller,
    filename: row.filename,
    contentType: row.content_type,
    size: Number(row.size),
    sha256: row.sha256 ? row.sha256.toString('hex') : null,
    state: row.state,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}
