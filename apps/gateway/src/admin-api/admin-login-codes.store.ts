import { Injectable } from '@nestjs/common';
import { adminLoginCodeId, mintAdminLoginCode, tokenMatches } from '@mcpgw/grants';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import type { GatewayDb } from '../database/schema';
import { ADMIN_SESSION_TTL_SECONDS } from './admin-sessions.store';
import { AdminTokensStore } from './admin-tokens.store';

export interface LoginCodeView {
  id: string;
  expires_at: string;
}

/**
 * One-time login codes (`adl_<id>_<secret>`): the console's login link, which
 * `npm start` prints (admin CLI `console login-link`). Only a digest is stored.
 * A code is exchanged once (the claim is one conditional UPDATE, so two
 * exchanges racing get one session between them) and only before it expires;
 * the exchange gives it an admin token of its own (label `login link <id>`,
 * as long as a session, its secret never shown), so that its session is
 * listed, audited and revoked like any other (`console token revoke`).
 */
@Injectable()
export class AdminLoginCodesStore {
  constructor(
    @InjectKysely() private readonly db: GatewayDb,
    private readonly tokens: AdminTokensStore,
  ) {}

  /** A new code, valid `ttlSeconds`: returned once. */
  async create(ttlSeconds: number): Promise<LoginCodeView & { code: string }> {
    const minted = mintAdminLoginCode();
    const row = await this.db
      .insertInto('admin_login_codes')
      .values({
        id: minted.id,
        digest: minted.digest,
        expires_at: sql<Date>`now() + make_interval(secs => ${ttlSeconds})`,
      })
      .returning(['id', 'expires_at'])
      .executeTakeFirstOrThrow();
    return { id: row.id, expires_at: row.expires_at.toISOString(), code: minted.token };
  }

  /**
   * Uses the code up and answers the id of the admin token its session is to
   * belong to; undefined when it is malformed, unknown, wrong, used or expired
   * (the same for each).
   */
  async redeem(presented: string): Promise<string | undefined> {
    const id = adminLoginCodeId(presented);
    if (!id) return undefined;
    const row = await this.db.selectFrom('admin_login_codes').select('digest').where('id', '=', id).executeTakeFirst();
    if (!row || !tokenMatches(presented, row.digest)) return undefined;
    const claimed = await this.db
      .updateTable('admin_login_codes')
      .set({ used_at: sql<Date>`now()` })
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .where('expires_at', '>', sql<Date>`now()`)
      .returning('id')
      .executeTakeFirst();
    if (!claimed) return undefined;
    const token = await this.tokens.create(`login link ${id}`, ADMIN_SESSION_TTL_SECONDS);
    return token.id;
  }
}
