import { Injectable } from '@nestjs/common';
import { InvalidRequestError, NotFoundError, type SkillDefinition } from '@mcpgw/contracts';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import { upsertTools } from '../agents/agents.store';
import { notifyChange } from '../database/notify-change';
import type { GatewayDb, ToolChangeStatus } from '../database/schema';
import { proposalDigest, type ToolChangePolicy } from './tool-definitions';

/** A change as the operator reads it (`tools changes`, `GET /admin/v1/tool-changes`). */
export interface ToolChangeView {
  agent_id: string;
  version: number;
  status: ToolChangeStatus;
  created_at: string;
  decided_at: string | null;
  decided_by: string | null;
  /** The new and changed definitions. */
  proposed: SkillDefinition[];
  /** The approved definitions of the changed tools when it was proposed. */
  approved_before: SkillDefinition[];
}

/** What became of a proposal at registration. */
export type Proposed = { version: number; status: 'pending' | 'rejected' };

/**
 * The versions of each agent's catalogue that registrations proposed, and the
 * operator's decisions (README.md here). The writers that run inside a
 * registration take its transaction (`tx`), whose upsert holds the agent's row.
 */
@Injectable()
export class ToolChangesStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /** The agent's own policy, or undefined for the gateway's default (TOOL_CHANGES); in `tx` if given. */
  async policyOf(agentId: string, tx: GatewayDb = this.db): Promise<ToolChangePolicy | undefined> {
    const row = await tx.selectFrom('agents').select('tool_changes').where('id', '=', agentId).executeTakeFirst();
    return row?.tool_changes ?? undefined;
  }

  /** Set an agent's policy (null: the gateway's default). False: no such agent. */
  async setPolicy(agentId: string, policy: ToolChangePolicy | null): Promise<boolean> {
    const row = await this.db
      .updateTable('agents')
      .set({ tool_changes: policy })
      .where('id', '=', agentId)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * A registration under `hold` proposes these definitions. The same proposal
   * again (a pod registers at every start) changes nothing; one the operator
   * rejected stays rejected; another supersedes the change waiting.
   */
  async propose(
    tx: GatewayDb,
    agentId: string,
    proposed: SkillDefinition[],
    approvedBefore: SkillDefinition[],
  ): Promise<Proposed> {
    const digest = proposalDigest(proposed);
    const known = await tx
      .selectFrom('tool_changes')
      .select(['version', 'status'])
      .where('agent_id', '=', agentId)
      .where('digest', '=', digest)
      .where('status', 'in', ['pending', 'rejected'])
      .orderBy('version', 'desc')
      .executeTakeFirst();
    if (known) return known as Proposed;
    await this.supersede(tx, agentId);
    const version = await this.insert(tx, agentId, 'pending', digest, proposed, approvedBefore, null);
    return { version, status: 'pending' };
  }

  /** A registration under `accept` changed these: recorded as approved by the policy. */
  async accepted(
    tx: GatewayDb,
    agentId: string,
    proposed: SkillDefinition[],
    approvedBefore: SkillDefinition[],
  ): Promise<number> {
    await this.supersede(tx, agentId);
    return this.insert(tx, agentId, 'approved', proposalDigest(proposed), proposed, approvedBefore, 'policy:accept');
  }

  /** Nothing waits any more (the agent registers the approved catalogue again, or accepted a newer one). */
  async supersede(tx: GatewayDb, agentId: string): Promise<void> {
    await tx
      .updateTable('tool_changes')
      .set({ status: 'superseded', decided_at: sql`now()` })
      .where('agent_id', '=', agentId)
      .where('status', '=', 'pending')
      .execute();
  }

  /**
   * The operator's decision on a waiting change. Approved: its definitions are
   * served from the commit on (every replica's catalogue is dropped, and
   * clients watching the list hear of it). 404 for no such change; 400 for one
   * no longer waiting.
   */
  async decide(
    agentId: string,
    version: number,
    decision: 'approved' | 'rejected',
    decidedBy: string,
  ): Promise<ToolChangeView> {
    return this.db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom('tool_changes')
        .selectAll()
        .where('agent_id', '=', agentId)
        .where('version', '=', version)
        .forUpdate()
        .executeTakeFirst();
      if (!row) throw new NotFoundError(`agent ${agentId} has no tool change ${version}`);
      if (row.status !== 'pending') {
        throw new InvalidRequestError(`tool change ${version} of agent ${agentId} is ${row.status}, not pending`);
      }
      const decided = await tx
        .updateTable('tool_changes')
        .set({ status: decision, decided_at: sql`now()`, decided_by: decidedBy })
        .where('agent_id', '=', agentId)
        .where('version', '=', version)
        .returningAll()
        .executeTakeFirstOrThrow();
      if (decision === 'approved') {
        await upsertTools(tx, agentId, row.proposed);
        await notifyChange('agent', agentId).execute(tx);
        await notifyChange('tools', agentId).execute(tx);
      }
      await notifyChange('toolchange', agentId).execute(tx);
      return view(decided);
    });
  }

  /** Changes, newest first: of one agent or all, of one status or all. */
  async list(filter: { agentId?: string; status?: ToolChangeStatus; limit: number }): Promise<ToolChangeView[]> {
    const rows = await this.db
      .selectFrom('tool_changes')
      .selectAll()
      .$if(filter.agentId !== undefined, (qb) => qb.where('agent_id', '=', filter.agentId!))
      .$if(filter.status !== undefined, (qb) => qb.where('status', '=', filter.status!))
      .orderBy('created_at', 'desc')
      .orderBy('version', 'desc')
      .limit(filter.limit)
      .execute();
    return rows.map(view);
  }

  async find(agentId: string, version: number): Promise<ToolChangeView | undefined> {
    const row = await this.db
      .selectFrom('tool_changes')
      .selectAll()
      .where('agent_id', '=', agentId)
      .where('version', '=', version)
      .executeTakeFirst();
    return row && view(row);
  }

  /** Waiting changes per agent, for `mcpgw_tool_changes_pending`. */
  async pendingByAgent(): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('tool_changes')
      .select(['agent_id', (eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('n')])
      .where('status', '=', 'pending')
      .groupBy('agent_id')
      .execute();
    return new Map(rows.map((row) => [row.agent_id, row.n]));
  }

  private async insert(
    tx: GatewayDb,
    agentId: string,
    status: ToolChangeStatus,
    digest: string,
    proposed: SkillDefinition[],
    approvedBefore: SkillDefinition[],
    decidedBy: string | null,
  ): Promise<number> {
    // The agent's row is locked by the registration: versions of one agent are numbered one after the other.
    const { rows } = await sql<{ version: number }>`
      INSERT INTO tool_changes (agent_id, version, status, digest, proposed, approved_before, decided_at, decided_by)
      SELECT ${agentId}, coalesce(max(version), 0) + 1, ${status}, ${digest},
             ${JSON.stringify(proposed)}::jsonb, ${JSON.stringify(approvedBefore)}::jsonb,
             CASE WHEN ${decidedBy}::text IS NULL THEN NULL ELSE now() END, ${decidedBy}::text
      FROM tool_changes WHERE agent_id = ${agentId}
      RETURNING version`.execute(tx);
    return rows[0].version;
  }
}

function view(row: {
  agent_id: string;
  version: number;
  status: ToolChangeStatus;
  created_at: Date;
  decided_at: Date | null;
  decided_by: string | null;
  proposed: SkillDefinition[];
  approved_before: SkillDefinition[];
}): ToolChangeView {
  return {
    agent_id: row.agent_id,
    version: row.version,
    status: row.status,
    created_at: row.created_at.toISOString(),
    decided_at: row.decided_at?.toISOString() ?? null,
    decided_by: row.decided_by,
    proposed: row.proposed,
    approved_before: row.approved_before,
  };
}
