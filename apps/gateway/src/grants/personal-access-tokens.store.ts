import { Injectable } from '@nestjs/common';
import { NotFoundError } from '@mcpgw/contracts';
import { mintPersonalAccessToken } from '@mcpgw/grants';
import { InjectKysely } from '@mcpgw/persistence';
import { sql, type Selectable } from 'kysely';
import type { GatewayDb, PersonalAccessTokensTable } from '../database/schema';

/** A personal access token as an operator sees it: never the token. */
export interface PatView {
  id: string;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}

const VIEW = ['id', 'label', 'created_at', 'revoked_at'] as const;

/** Personal access tokens: minted by the admin CLI or the management API, stored as digests only. */
@Injectable()
export class PersonalAccessTokensStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  async create(label?: string): Promise<PatView & { token: string }> {
    const minted = mintPersonalAccessToken();
    const row = await this.db
      .insertInto('personal_access_tokens')
      .values({ id: minted.id, digest: minted.digest, label: label ?? null })
      .returning(VIEW)
      .executeTakeFirstOrThrow();
    return { ...view(row), token: minted.token };
  }

  async list(): Promise<PatView[]> {
    return (await this.db.selectFrom('personal_access_tokens').select(VIEW).orderBy('created_at').execute()).map(view);
  }

  /** Revoking a revoked token keeps its first revocation time. */
  async revoke(id: string): Promise<PatView> {
    const row = await this.db
      .updateTable('personal_access_tokens')
      .set({ revoked_at: sql<Date>`coalesce(revoked_at, now())` })
      .where('id', '=', id)
      .returning(VIEW)
      .executeTakeFirst();
    if (!row) throw new NotFoundError(`no personal access token ${id}`);
    return view(row);
  }
}

function view(row: Pick<Selectable<PersonalAccessTokensTable>, (typeof VIEW)[number]>): PatView {
  return {
    id: row.id,
    label: row.label,
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at ? row.revoked_at.toISOString() : null,
  };
}
