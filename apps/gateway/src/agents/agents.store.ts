import { Injectable } from '@nestjs/common';
import {
  InvalidRequestError,
  type PromptDefinition,
  type ResourceDefinition,
  type ResourceTemplateDefinition,
  type SkillDefinition,
} from '@mcpgw/contracts';
import { InjectKysely, holdingUntil, type HoldDeadline } from '@mcpgw/persistence';
import { sql } from 'kysely';
import { notifyChange } from '../database/notify-change';
import type { GatewayDb } from '../database/schema';

export interface AgentRow {
  id: string;
  workspace_id: string;
  created_at: string;
  tools: number;
}

/** Everything but tools that an agent registers. */
export interface AgentExtras {
  resources: ResourceDefinition[];
  resource_templates: ResourceTemplateDefinition[];
  prompts: PromptDefinition[];
  /** The agent answers completion/complete (else the gateway answers with no values). */
  completions: boolean;
  /** The agent answers conversational messages (a message handler; else A2A answers UnsupportedOperationError). */
  conversation: boolean;
}

const NO_EXTRAS: AgentExtras = {
  resources: [],
  resource_templates: [],
  prompts: [],
  completions: false,
  conversation: false,
};

/** How callers may authenticate at the agent's endpoint (`agent auth`). */
export interface AuthMethods {
  api_keys: boolean;
  oauth: boolean;
}

/** Who may read the agent's A2A card: anyone, or only its callers (`agent update --a2a-card`). */
export type A2aCardVisibility = 'public' | 'private';

export const A2A_CARD_VISIBILITIES: readonly A2aCardVisibility[] = ['public', 'private'];

export const ALL_AUTH_METHODS: AuthMethods = { api_keys: true, oauth: true };

export interface ToolRow {
  id: string;
  name: string;
  definition: SkillDefinition;
}

/** Agents and their registered tools. Writers announce changes to every gateway's cache. */
@Injectable()
export class AgentsStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  async list(): Promise<AgentRow[]> {
    return this.rows();
  }

  /** One agent with its tool count, or undefined. */
  async find(agentId: string): Promise<AgentRow | undefined> {
    return (await this.rows(agentId))[0];
  }

  private async rows(agentId?: string): Promise<AgentRow[]> {
    const rows = await this.db
      .selectFrom('agents as a')
      .leftJoin('tools as t', 't.agent_id', 'a.id')
      .select((eb) => [
        'a.id',
        'a.workspace_id',
        'a.created_at',
        eb.cast<number>(eb.fn.count('t.id'), 'integer').as('tools'),
      ])
      .$if(agentId !== undefined, (qb) => qb.where('a.id', '=', agentId!))
      .groupBy('a.id')
      .orderBy('a.id')
      .execute();
    return rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() }));
  }

  /** Create the agent if it is new; an agent never moves to another workspace. */
  ensure(agentId: string, workspaceId: string): Promise<void> {
    return upsertAgent(this.db, agentId, workspaceId);
  }

  /**
   * Make the agent's tools exactly `skills`, or what `admit` makes of them: it
   * runs in the same transaction, after the agent's row is locked, with the
   * tools served until now (tool pinning: ../tool-pinning/README.md), and
   * answers the tools to serve. A tool keeps its id across registrations while
   * its name stays; dropped tools are removed. Answers the tools served.
   */
  async replaceTools(
    agentId: string,
    workspaceId: string,
    skills: SkillDefinition[],
    extras: AgentExtras = NO_EXTRAS,
    admit?: (tx: GatewayDb, served: SkillDefinition[]) => Promise<SkillDefinition[]>,
  ): Promise<SkillDefinition[]> {
    return this.db.transaction().execute(async (tx) => {
      // The upsert locks the agent's row: registrations of one agent decide one after the other.
      await upsertAgent(tx, agentId, workspaceId);
      const served = admit ? await admit(tx, await toolDefinitions(tx, agentId)) : skills;
      await tx
        .updateTable('agents')
        .set({
          resources: JSON.stringify(extras.resources),
          resource_templates: JSON.stringify(extras.resource_templates),
          prompts: JSON.stringify(extras.prompts),
          completions: extras.completions,
          conversation: extras.conversation,
        })
        .where('id', '=', agentId)
        .execute();
      const names = served.map((skill) => skill.name);
      await tx
        .deleteFrom('tools')
        .where('agent_id', '=', agentId)
        .where((eb) => eb.not(eb('name', '=', eb.fn.any(sql<string[]>`${names}::text[]`))))
        .execute();
      await upsertTools(tx, agentId, served);
      await notifyChange('agent', agentId).execute(tx);
      return served;
    });
  }

  /** `deadline`: how long the caller lets it wait out a database outage (none: DB_OUTAGE_HOLD_MS). */
  async extras(agentId: string, deadline?: HoldDeadline): Promise<AgentExtras> {
    const row = await holdingUntil(this.db, deadline)
      .selectFrom('agents')
      .select(['resources', 'resource_templates', 'prompts', 'completions', 'conversation'])
      .where('id', '=', agentId)
      .executeTakeFirst();
    return row ?? NO_EXTRAS;
  }

  /** An agent not (yet) created takes both, as every agent does until told otherwise. */
  async authMethods(agentId: string): Promise<AuthMethods> {
    const row = await this.db
      .selectFrom('agents')
      .select(['api_keys_enabled as api_keys', 'oauth_enabled as oauth'])
      .where('id', '=', agentId)
      .executeTakeFirst();
    return row ?? ALL_AUTH_METHODS;
  }

  /** Who may read the agent's A2A card (migration 1764721000000); undefined: no such agent. */
  async a2aCard(agentId: string): Promise<A2aCardVisibility | undefined> {
    const row = await this.db.selectFrom('agents').select('a2a_card').where('id', '=', agentId).executeTakeFirst();
    return row?.a2a_card;
  }

  /** Make the agent's A2A card public or private; every gateway hears of it at once. Undefined: no agent. */
  async setA2aCard(agentId: string, visibility: A2aCardVisibility): Promise<A2aCardVisibility | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const row = await tx
        .updateTable('agents')
        .set({ a2a_card: visibility })
        .where('id', '=', agentId)
        .returning('a2a_card')
        .executeTakeFirst();
      if (row) await notifyChange('agent', agentId).execute(tx);
      return row?.a2a_card;
    });
  }

  /** Turn the agent's API keys or OAuth on or off; every gateway hears of it at once. Undefined: no agent. */
  async setAuthMethods(agentId: string, changes: Partial<AuthMethods>): Promise<AuthMethods | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const row = await tx
        .updateTable('agents')
        .set({
          ...(changes.api_keys !== undefined && { api_keys_enabled: changes.api_keys }),
          ...(changes.oauth !== undefined && { oauth_enabled: changes.oauth }),
        })
        .where('id', '=', agentId)
        .returning(['api_keys_enabled as api_keys', 'oauth_enabled as oauth'])
        .executeTakeFirst();
      if (row) await notifyChange('agent', agentId).execute(tx);
      return row;
    });
  }

  async tools(agentId: string, deadline?: HoldDeadline): Promise<ToolRow[]> {
    return holdingUntil(this.db, deadline)
      .selectFrom('tools')
      .select(['id', 'name', 'definition'])
      .where('agent_id', '=', agentId)
      .orderBy('name')
      .execute();
  }
}

/** The agent's tools as served now (on `db` or inside a transaction), by name. */
export async function toolDefinitions(db: GatewayDb, agentId: string): Promise<SkillDefinition[]> {
  const rows = await db
    .selectFrom('tools')
    .select('definition')
    .where('agent_id', '=', agentId)
    .orderBy('name')
    .execute();
  return rows.map((row) => row.definition);
}

/** Write these definitions of the agent's tools, each in one statement (its rows come out of the JSON array). */
export async function upsertTools(db: GatewayDb, agentId: string, skills: SkillDefinition[]): Promise<void> {
  if (skills.length === 0) return;
  await sql`
    INSERT INTO tools (agent_id, name, definition)
    SELECT ${agentId}, skill->>'name', skill FROM jsonb_array_elements(${JSON.stringify(skills)}::jsonb) AS skill
    ON CONFLICT (agent_id, name) DO UPDATE SET definition = EXCLUDED.definition, registered_at = now()`.execute(db);
}

/** On `db` or inside a transaction (a `Transaction` is a `Kysely`). */
async function upsertAgent(db: GatewayDb, agentId: string, workspaceId: string): Promise<void> {
  const row = await db
    .insertInto('agents')
    .values({ id: agentId, workspace_id: workspaceId })
    .onConflict((oc) => oc.column('id').doUpdateSet({ updated_at: sql<Date>`now()` }))
    .returning('workspace_id')
    .executeTakeFirstOrThrow();
  if (row.workspace_id !== workspaceId) {
    throw new InvalidRequestError(`agent ${agentId} belongs to workspace ${row.workspace_id}`);
  }
}
