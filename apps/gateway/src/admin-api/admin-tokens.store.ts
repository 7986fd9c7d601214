import { Injectable } from '@nestjs/common';
import { NotFoundError } from '@mcpgw/contracts';
import { adminTokenId, mintAdminToken, tokenMatches } from '@mcpgw/grants';
import { InjectKysely } from '@mcpgw/persistence';
import { sql, type Selectable } from 'kysely';
import type { AdminTokensTable, GatewayDb } from '../database/schema';

export interface AdminTokenView {
  id: string;
  label: string | null;
  created_at: string;
  /** Null: never expires. */
  expires_at: string | null;
  revoked_at: string | null;
  /** To the minute: the use is recorded at most once a minute. */
  last_used_at: string | null;
}

const VIEW = ['id', 'label', 'created_at', 'expires_at', 'revoked_at', 'last_used_at'] as const;
type ViewRow = Pick<Selectable<AdminTokensTable>, (typeof VIEW)[number]>;

/**
 * Admin tokens of the management API: only a SHA-256 digest of each is stored
 * (tokens carry 256 random bits); the token itself is returned once, at
 * creation. Every request is checked against the table, not a cache, so a
 * revocation holds on every replica from its commit on (admin traffic is light).
 */
@Injectable()
export class AdminTokensStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /** A new token, valid for `ttlSeconds` (none: until revoked). */
  async create(label: string | undefined, ttlSeconds: number | undefined): Promise<AdminTokenView & { token: string }> {
    const minted = mintAdminToken();
    const row = await this.db
      .insertInto('admin_tokens')
      .values({
        id: minted.id,
        digest: minted.digest,
        label: label ?? null,
        expires_at: ttlSeconds === undefined ? null : sql<Date>`now() + make_interval(secs => ${ttlSeconds})`,
      })
      .returning(VIEW)
      .executeTakeFirstOrThrow();
    return { ...view(row), token: minted.token };
  }

  async list(): Promise<AdminTokenView[]> {
    const rows = await this.db.selectFrom('admin_tokens').select(VIEW).orderBy('created_at').execute();
    return rows.map(view);
  }

  /** Revoked at once; revoking a revoked token keeps its first revocation time. */
  async revoke(id: string): Promise<AdminTokenView> {
    const row = await this.db
      .updateTable('admin_tokens')
      .set({ revoked_at: sql<Date>`coalesce(revoked_at, now())` })
      .where('id', '=', id)
      .returning(VIEW)
      .executeTakeFirst();
    if (!row) throw new NotFoundError(`no admin token ${id}`);
    return view(row);
  }

  /**
   * The id of the token when `presented` is a live one (well formed, known, not
   * revoked, not expired, and its digest matches in constant time); else
   * undefined, whichever the reason, so a refusal confirms nothing.
   */
  async verify(presented: string): Promise<string | undefined> {
    const id = adminTokenId(presented);
    if (!id) return undefined;
    const row = await this.db
      .selectFrom('admin_tokens')
      .select('digest')
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
      .executeTakeFirst();
    if (!row || !tokenMatches(presented, row.digest)) return undefined;
    await this.db
      .updateTable('admin_tokens')
      .set({ last_used_at: sql<Date>`now()` })
      .where('id', '=', id)
      .where((eb) =>
        eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]),
      )
      .execute();
    return id;
  }
}

function view(row: ViewRow): AdminTokenView {
  const iso = (value: Date | null) => (value ? value.toISOString() : null);
  return {
    id: row.id,
    label: row.label,
    created_at: row.created_at.toISOString(),
    expires_at: iso(row.expires_at),
    revoked_at: iso(row.revoked_at),
    last_used_at: iso(row.last_used_at),
  };
}
