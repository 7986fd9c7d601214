import { Injectable } from '@nestjs/common';
import { mintPersonalAccessToken } from '@mcpgw/grants';
import { InjectKysely } from '@mcpgw/persistence';
import type { GatewayDb } from '../database/schema';

/** Personal access tokens: minted by the admin CLI, stored as digests only. */
@Injectable()
export class PersonalAccessTokensStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  async create(label?: string): Promise<{ id: string; token: string; created_at: string }> {
    const minted = mintPersonalAccessToken();
    const row = await this.db
      .insertInto('personal_access_tokens')
      .values({ id: minted.id, digest: minted.digest, label: label ?? null })
      .returning('created_at')
      .executeTakeFirstOrThrow();
    return { id: minted.id, token: minted.token, created_at: row.created_at.toISOString() };
  }
}
