import { Injectable } from '@nestjs/common';
import { adminSessionId, mintAdminSession, tokenMatches } from '@mcpgw/grants';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import type { GatewayDb } from '../database/schema';

/** A browser session lasts this long at most (less when its admin token expires sooner). */
export const ADMIN_SESSION_TTL_SECONDS = 12 * 3600;

export interface AdminSession {
  id: string;
  token_id: string;
  expires_at: string;
}

/**
 * Browser sessions of the management API: a login with an admin token makes one
 * (the cookie's value, returned once); only its digest is stored. A session is
 * live while it has not ended or expired and its token is neither revoked nor
 * expired: revoking a token ends its sessions with it. Checked on every request.
 */
@Injectable()
export class AdminSessionsStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /** A session for the (live) token `tokenId`: its cookie value, shown once. */
  async create(tokenId: string): Promise<AdminSession & { session: string }> {
    const minted = mintAdminSession();
    const row = await this.db
      .insertInto('admin_sessions')
      .values({
        id: minted.id,
        digest: minted.digest,
        token_id: tokenId,
        expires_at: sql<Date>`least(
          coalesce((SELECT expires_at FROM admin_tokens WHERE id = ${tokenId}), 'infinity'::timestamptz),
          now() + make_interval(secs => ${ADMIN_SESSION_TTL_SECONDS}))`,
      })
      .returning(['id', 'token_id', 'expires_at'])
      .executeTakeFirstOrThrow();
    return { id: row.id, token_id: row.token_id, expires_at: row.expires_at.toISOString(), session: minted.token };
  }

  /** The session when `presented` is a live one (its digest compared in constant time), else undefined. */
  async verify(presented: string): Promise<AdminSession | undefined> {
    const id = adminSessionId(presented);
    if (!id) return undefined;
    const row = await this.db
      .selectFrom('admin_sessions as s')
      .innerJoin('admin_tokens as t', 't.id', 's.token_id')
      .select(['s.id', 's.digest', 's.token_id', 's.expires_at'])
      .where('s.id', '=', id)
      .where('s.ended_at', 'is', null)
      .where('s.expires_at', '>', sql<Date>`now()`)
      .where('t.revoked_at', 'is', null)
      .where((eb) => eb.or([eb('t.expires_at', 'is', null), eb('t.expires_at', '>', sql<Date>`now()`)]))
      .executeTakeFirst();
    if (!row || !tokenMatches(presented, row.digest)) return undefined;
    return { id: row.id, token_id: row.token_id, expires_at: row.expires_at.toISOString() };
  }

  /** Logging out: the session is refused from now on. */
  async end(id: string): Promise<void> {
    await this.db
      .updateTable('admin_sessions')
      .set({ ended_at: sql<Date>`coalesce(ended_at, now())` })
      .where('id', '=', id)
      .execute();
  }
}
