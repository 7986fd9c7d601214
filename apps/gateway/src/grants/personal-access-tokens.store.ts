import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { mintPersonalAccessToken } from '@mcpgw/grants';
import { DataSource } from 'typeorm';

/** Personal access tokens: minted by the admin CLI, stored as digests only. */
@Injectable()
export class PersonalAccessTokensStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async create(label?: string): Promise<{ id: string; token: string; created_at: string }> {
    const minted = mintPersonalAccessToken();
    const [row] = await this.db.query(
      `INSERT INTO personal_access_tokens (id, digest, label) VALUES ($1, $2, $3) RETURNING created_at`,
      [minted.id, minted.digest, label ?? null],
    );
    return { id: minted.id, token: minted.token, created_at: new Date(row.created_at).toISOString() };
  }
}
