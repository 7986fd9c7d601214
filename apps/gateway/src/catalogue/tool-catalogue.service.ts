import { Inject, Injectable, Logger } from '@nestjs/common';
import type { HoldDeadline } from '@mcpgw/persistence';
import type { SkillDefinition } from '@mcpgw/contracts';
import { AgentsStore, type AgentExtras } from '../agents/agents.store';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { headerParamsOf, type HeaderParam } from './header-params';
import { schemaLimitsFrom } from './schema-limits';
import type { ArgumentsValidator } from './tool-validator';
import { validatorCache } from './validator-cache';
import { UriTemplate } from './uri-template';

export interface CatalogueTool {
  id: string;
  definition: SkillDefinition;
  validate: ArgumentsValidator;
  /** Parameters mirrored into `Mcp-Param-*` headers (`x-mcp-header`, header-params.ts). */
  headerParams: HeaderParam[];
}

export interface AgentCatalogue extends AgentExtras {
  tools: CatalogueTool[];
  byName: Map<string, CatalogueTool>;
  /** `resource_templates`, parsed once per load (see README.md). */
  templates: UriTemplate[];
}

/**
 * Each agent's catalogue (tools with compiled argument validators, resources,
 * parsed resource templates, prompts), cached per agent and
 * dropped when a registration changes them (on any replica). Concurrent misses
 * share one load.
 */
@Injectable()
export class ToolCatalogueService {
  private readonly logger = new Logger(ToolCatalogueService.name);
  private readonly cache = new Map<string, Promise<AgentCatalogue>>();

  constructor(
    private readonly agents: AgentsStore,
    invalidation: CacheInvalidationService,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {
    invalidation.on('agent', (agentId) => (agentId ? this.cache.delete(agentId) : this.cache.clear()));
  }

  /**
   * `deadline`: the asking call's, which a load waits for at most while the database is away
   * (a load shared by concurrent misses waits as long as the first of them allows).
   */
  forAgent(agentId: string, deadline?: HoldDeadline): Promise<AgentCatalogue> {
    let entry = this.cache.get(agentId);
    if (!entry) {
      entry = this.load(agentId, deadline);
      this.cache.set(agentId, entry);
      entry.catch(() => this.cache.delete(agentId));
    }
    return entry;
  }

  private async load(agentId: string, deadline: HoldDeadline | undefined): Promise<AgentCatalogue> {
    const tools: CatalogueTool[] = [];
    const [rows, extras] = await Promise.all([
      this.agents.tools(agentId, deadline),
      this.agents.extras(agentId, deadline),
    ]);
    const validators = validatorCache(schemaLimitsFrom(this.env)).compileEach(
      rows.map((row) => row.definition.input_schema),
    );
    rows.forEach((row, i) => {
      try {
        const validate = validators[i];
        if (validate instanceof Error) throw validate;
        tools.push({
          id: row.id,
          definition: row.definition,
          validate,
          headerParams: headerParamsOf(row.definition.input_schema),
        });
      } catch (error) {
        this.logger.error(`tool ${agentId}/${row.name} has an invalid input schema: ${(error as Error).message}`);
      }
    });
    const templates: UriTemplate[] = [];
    for (const { uriTemplate } of extras.resource_templates) {
      try {
        templates.push(UriTemplate.parse(uriTemplate));
      } catch (error) {
        this.logger.error(`agent ${agentId}: ${(error as Error).message}; no URI matches it`);
      }
    }
    return { ...extras, tools, byName: new Map(tools.map((tool) => [tool.definition.name, tool])), templates };
  }
}
