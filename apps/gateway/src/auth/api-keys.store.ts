import { Injectable } from '@nestjs/common';
import { NotFoundError } from '@mcpgw/contracts';
import { mintApiKey, type MintedApiKey } from '@mcpgw/grants';
import { InjectKysely } from '@mcpgw/persistence';
import { sql, type Selectable } from 'kysely';
import { notifyChange } from '../database/notify-change';
import type { ApiKeysTable, GatewayDb } from '../database/schema';

export interface ApiKeyView {
  id: string;
  agent_id: string;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}

/** The columns an `ApiKeyView` is made of. */
const VIEW = ['id', 'agent_id', 'label', 'created_at', 'revoked_at'] as const;
type ViewRow = Pick<Selectable<ApiKeysTable>, (typeof VIEW)[number]>;

/** Agent API keys: only digests are stored; the key itself is returned once, at creation. */
@Injectable()
export class ApiKeysStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /** A new key, announced to every gateway's key index in the same transaction. */
  async create(agentId: string, label?: string): Promise<ApiKeyView & { key: string }> {
    const minted = mintApiKey();
    const row = await this.db.transaction().execute(async (tx) => {
      const created = await this.insertFor(tx, agentId, minted, label);
      if (created) await notifyChange('apikey', created.id).execute(tx);
      return created;
    });
    if (!row) throw new NotFoundError(`no agent ${agentId}; create it first (agent create) or start its pod`);
    return { ...view(row), key: minted.key };
  }

  /** INSERT … SELECT: no row (and no error from the foreign key) when the agent is unknown. */
  private insertFor(db: GatewayDb, agentId: string, minted: MintedApiKey, label?: string) {
    return db
      .insertInto('api_keys')
      .columns(['id', 'agent_id', 'digest', 'label'])
      .expression((eb) =>
        eb
          .selectFrom('agents')
          .select([
            eb.val(minted.id).as('key_id'),
            'agents.id',
            eb.val(minted.digest).as('digest'),
            eb.val(label ?? null).as('label'),
          ])
          .where('agents.id', '=', agentId),
      )
      .returning(VIEW)
      .executeTakeFirst();
  }

  async revoke(id: string): Promise<ApiKeyView> {
    return this.db.transaction().execute(async (tx) => {
      const row = await tx
        .updateTable('api_keys')
        .set({ revoked_at: sql<Date>`coalesce(revoked_at, now())` })
        .where('id', '=', id)
        .returning(VIEW)
        .executeTakeFirst();
      if (!row) throw new NotFoundError(`no API key ${id}`);
      await notifyChange('apikey', id).execute(tx);
      return view(row);
    });
  }

  async list(agentId?: string): Promise<ApiKeyView[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select(VIEW)
      .$if(agentId !== undefined, (qb) => qb.where('agent_id', '=', agentId!))
      .orderBy('created_at')
      .execute();
    return rows.map(view);
  }

  /** Every active key's id, agent and digest: the gateway's in-memory key index. */
  async listActiveDigests(): Promise<{ id: string; agent_id: string; digest: Buffer }[]> {
    return this.db
      .selectFrom('api_keys')
      .select(['id', 'agent_id', 'digest'])
      .where('revoked_at', 'is', null)
      .execute();
  }

  /** The digest and agent of an active key, for verification. */
  async findActive(id: string): Promise<{ agent_id: string; digest: Buffer } | undefined> {
    return this.db
      .selectFrom('api_keys')
      .select(['agent_id', 'digest'])
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
  }
}

function view(row: ViewRow): ApiKeyView {
  return {
    id: row.id,
    agent_id: row.agent_id,
    label: row.label,
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at ? row.revoked_at.toISOString() : null,
  };
}
