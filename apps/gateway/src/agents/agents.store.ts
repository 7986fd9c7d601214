import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  InvalidRequestError,
  type PromptDefinition,
  type ResourceDefinition,
  type ResourceTemplateDefinition,
  type SkillDefinition,
} from '@mcpgw/contracts';
import { DataSource } from 'typeorm';
import { notifySql } from '../cache/cache-invalidation.service';

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
}

export interface ToolRow {
  id: string;
  name: string;
  definition: SkillDefinition;
}

/** Agents and their registered tools. Writers announce changes to every gateway's cache. */
@Injectable()
export class AgentsStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async list(): Promise<AgentRow[]> {
    const rows = await this.db.query(
      `SELECT a.id, a.workspace_id, a.created_at, count(t.id)::int AS tools
         FROM agents a LEFT JOIN tools t ON t.agent_id = a.id
        GROUP BY a.id ORDER BY a.id`,
    );
    return rows.map((row: AgentRow) => ({ ...row, created_at: new Date(row.created_at).toISOString() }));
  }

  /** Create the agent if it is new; an agent never moves to another workspace. */
  ensure(agentId: string, workspaceId: string): Promise<void> {
    return upsertAgent(this.db, agentId, workspaceId);
  }

  /**
   * Make the agent's tools exactly `skills`. A tool keeps its id across
   * registrations while its name stays; dropped skills are removed.
   */
  async replaceTools(
    agentId: string,
    workspaceId: string,
    skills: SkillDefinition[],
    extras: AgentExtras = { resources: [], resource_templates: [], prompts: [] },
  ): Promise<void> {
    await this.db.transaction(async (tx) => {
      await upsertAgent(tx, agentId, workspaceId);
      await tx.query(
        `UPDATE agents SET resources = $2::jsonb, resource_templates = $3::jsonb, prompts = $4::jsonb WHERE id = $1`,
        [agentId, JSON.stringify(extras.resources), JSON.stringify(extras.resource_templates), JSON.stringify(extras.prompts)],
      );
      await tx.query(`DELETE FROM tools WHERE agent_id = $1 AND NOT (name = ANY($2::text[]))`, [
        agentId,
        skills.map((skill) => skill.name),
      ]);
      await tx.query(
        `INSERT INTO tools (agent_id, name, definition)
         SELECT $1, skill->>'name', skill FROM jsonb_array_elements($2::jsonb) AS skill
         ON CONFLICT (agent_id, name) DO UPDATE SET definition = EXCLUDED.definition, registered_at = now()`,
        [agentId, JSON.stringify(skills)],
      );
      await tx.query(notifySql('agent'), [agentId]);
    });
  }

  async extras(agentId: string): Promise<AgentExtras> {
    const [row] = await this.db.query(`SELECT resources, resource_templates, prompts FROM agents WHERE id = $1`, [agentId]);
    return row ?? { resources: [], resource_templates: [], prompts: [] };
  }

  async tools(agentId: string): Promise<ToolRow[]> {
    return this.db.query(`SELECT id, name, definition FROM tools WHERE agent_id = $1 ORDER BY name`, [agentId]);
  }
}

async function upsertAgent(
  db: Pick<DataSource, 'query'>,
  agentId: string,
  workspaceId: string,
): Promise<void> {
  const [row] = await db.query(
    `INSERT INTO agents (id, workspace_id) VALUES ($1, $2)
     ON CONFLICT (id) DO UPDATE SET updated_at = now()
     RETURNING workspace_id`,
    [agentId, workspaceId],
  );
  if (row.workspace_id !== workspaceId) {
    throw new InvalidRequestError(`agent ${agentId} belongs to workspace ${row.workspace_id}`);
  }
}
