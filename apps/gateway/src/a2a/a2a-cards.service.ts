import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AgentsStore, type A2aCardVisibility } from '../agents/agents.store';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { ToolCatalogueService } from '../catalogue/tool-catalogue.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { OAuthAuthenticator } from '../oauth/oauth-authenticator.service';
import { callerMayUse } from '../auth/caller';
import type { Caller } from '../auth/caller';
import { agentCard, type CardSecurity } from './agent-card';
import type { AgentCard } from './wire';

/**
 * Agents' A2A cards, built from the served catalogue (tool pinning's approved
 * definitions, through `ToolCatalogueService`), so a card changes when the
 * catalogue does. Whether a card is public is read once per agent and dropped
 * when the agent's row changes (on any replica), as the catalogue is.
 */
@Injectable()
export class A2aCards {
  private readonly visibility = new Map<string, Promise<A2aCardVisibility | undefined>>();

  constructor(
    private readonly catalogue: ToolCatalogueService,
    private readonly agents: AgentsStore,
    private readonly oauth: OAuthAuthenticator,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    invalidation: CacheInvalidationService,
  ) {
    invalidation.on('agent', (agentId) => (agentId ? this.visibility.delete(agentId) : this.visibility.clear()));
  }

  /** `public`, `private`, or undefined when there is no such agent. */
  visibilityOf(agentId: string): Promise<A2aCardVisibility | undefined> {
    let entry = this.visibility.get(agentId);
    if (!entry) {
      entry = this.agents.a2aCard(agentId);
      this.visibility.set(agentId, entry);
      entry.catch(() => this.visibility.delete(agentId));
    }
    return entry;
  }

  /** The agent's own card (`/a2a/{agent_id}`): every skill it serves. */
  async ofAgent(agentId: string, req: FastifyRequest): Promise<AgentCard> {
    const { tools, conversation } = await this.catalogue.forAgent(agentId);
    const oauth = this.oauth.issuersOf(agentId).length > 0;
    const security: CardSecurity = oauth
      ? { via: 'agent', oauthMetadataUrl: this.oauth.metadataUrlOf(agentId), scopes: this.oauth.scopesOf(agentId) }
      : { via: 'agent' };
    return agentCard({ agentId, root: `${this.origin(req)}/a2a/${agentId}`, tools, security, conversation });
  }

  /** A RuntimeGrant's card (`/workspaces/{ws}/agents/{agent_id}/a2a`): only the skills the grant names, no conversation. */
  async ofGrant(workspaceId: string, caller: Caller, req: FastifyRequest): Promise<AgentCard> {
    const { tools } = await this.catalogue.forAgent(caller.agentId);
    return agentCard({
      agentId: caller.agentId,
      root: `${this.origin(req)}/workspaces/${workspaceId}/agents/${caller.agentId}/a2a`,
      tools: tools.filter((tool) => callerMayUse(caller, tool)),
      security: { via: 'grant' },
      // A grant is limited to named skills: a conversation would escape it (conversation-rights.ts).
      conversation: false,
    });
  }

  /** PUBLIC_BASE_URL when set (behind a proxy it must be); else the origin the request reached. */
  private origin(req: FastifyRequest): string {
    return this.env.PUBLIC_BASE_URL || `${req.protocol}://${req.host}`;
  }
}
