import { Injectable } from '@nestjs/common';
import { InvalidRequestError } from '@mcpgw/contracts';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import { notifyChange } from '../database/notify-change';
import type { GatewayDb } from '../database/schema';
import type { QuotaOverrides } from './quota-limits';

export interface AgentQuotaRow extends QuotaOverrides {
  agent_id: string;
}

const COLUMNS = ['agent_id', 'concurrent_calls', 'calls_per_second', 'sessions', 'streams'] as const;

/** Per-agent quota overrides. Writers tell every gateway's limits cache (`quota:<agent>`) in the same transaction. */
@Injectable()
export class AgentQuotasStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  list(): Promise<AgentQuotaRow[]> {
    return this.db.selectFrom('agent_quotas').select(COLUMNS).execute();
  }

  find(agentId: string): Promise<AgentQuotaRow | undefined> {
    return this.db.selectFrom('agent_quotas').select(COLUMNS).where('agent_id', '=', agentId).executeTakeFirst();
  }

  /** Set some of an agent's overrides (null: back to the default); the others stay. */
  async set(agentId: string, changes: Partial<QuotaOverrides>): Promise<AgentQuotaRow> {
    return this.db.transaction().execute(async (tx) => {
      const agent = await tx.selectFrom('agents').select('id').where('id', '=', agentId).executeTakeFirst();
      if (!agent) throw new InvalidRequestError(`no agent ${agentId}`);
      const row = await tx
        .insertInto('agent_quotas')
        .values({ agent_id: agentId, ...changes })
        .onConflict((oc) => oc.column('agent_id').doUpdateSet({ ...changes, updated_at: sql<Date>`now()` }))
        .returning(COLUMNS)
        .executeTakeFirstOrThrow();
      await notifyChange('quota', agentId).execute(tx);
      return row;
    });
  }
}
