import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { NotFoundError } from '@mcpgw/contracts';
import { mintApiKey } from '@mcpgw/grants';
import { DataSource } from 'typeorm';
import { notifySql } from '../cache/cache-invalidation.service';

export interface ApiKeyView {
  id: string;
  agent_id: string;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}

/** Agent API keys: only digests are stored; the key itself is returned once, at creation. */
@Injectable()
export class ApiKeysStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async create(agentId: string, label?: string): Promise<ApiKeyView & { key: string }> {
    const minted = mintApiKey();
    const [row] = await this.db.query(
      `INSERT INTO api_keys (id, agent_id, digest, label)
       SELECT $1, id, $3, $4 FROM agents WHERE id = $2
       RETURNING id, agent_id, label, created_at, revoked_at`,
      [minted.id, agentId, minted.digest, label ?? null],
    );
    if (!row) throw new NotFoundError(`no agent ${agentId}; create it first (agent create) or start its pod`);
    return { ...view(row), key: minted.key };
  }

  async revoke(id: string): Promise<ApiKeyView> {
    return this.db.transaction(async (tx) => {
      // TypeORM answers an UPDATE with [rows, affected].
      const [rows]: [Record<string, unknown>[], number] = await tx.query(
        `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1
         RETURNING id, agent_id, label, created_at, revoked_at`,
        [id],
      );
      const row = rows[0];
      if (!row) throw new NotFoundError(`no API key ${id}`);
      await tx.query(notifySql('apikey'), [id]);
      return view(row);
    });
  }

  async list(agentId?: string): Promise<ApiKeyView[]> {
    const rows = await this.db.query(
      `SELECT id, agent_id, label, created_at, revoked_at FROM api_keys
        WHERE $1::text IS NULL OR agent_id = $1 ORDER BY created_at`,
      [agentId ?? null],
    );
    return rows.map(view);
  }

  /** The digest and agent of an active key, for verification. */
  async findActive(id: string): Promise<{ agent_id: string; digest: Buffer } | undefined> {
    const [row] = await this.db.query(
      `SELECT agent_id, digest FROM api_keys WHERE id = $1 AND revoked_at IS NULL`,
      [id],
    );
    return row;
  }
}

function view(row: Record<string, unknown>): ApiKeyView {
  return {
    id: row.id as string,
    agent_id: row.agent_id as string,
    label: (row.label as string | null) ?? null,
    created_at: new Date(row.created_at as string).toISOString(),
    revoked_at: row.revoked_at ? new Date(row.revoked_at as string).toISOString() : null,
  };
}
