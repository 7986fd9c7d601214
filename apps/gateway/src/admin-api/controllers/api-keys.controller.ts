import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { AgentsStore } from '../../agents/agents.store';
import { ApiKeysStore, type ApiKeyView } from '../../auth/api-keys.store';
import { requireAgent } from '../../admin/operations/agents';
import { objectBody, optionalString } from '../request-body';

/**
 * An agent's API keys (the CLI's `apikey create|list|revoke`): only digests are
 * stored; a new key is in the creation's answer and nowhere else, ever.
 */
@Controller('admin/v1')
export class ApiKeysController {
  constructor(
    private readonly agents: AgentsStore,
    private readonly apiKeys: ApiKeysStore,
  ) {}

  @Get('agents/:agentId/api-keys')
  async list(@Param('agentId') agentId: string): Promise<{ items: ApiKeyView[] }> {
    await requireAgent(this.agents, agentId);
    return { items: await this.apiKeys.list(agentId) };
  }

  @Post('agents/:agentId/api-keys')
  @HttpCode(201)
  create(@Param('agentId') agentId: string, @Body() body: unknown): Promise<ApiKeyView & { key: string }> {
    const label = optionalString(objectBody(body, ['label']), 'label', 200);
    return this.apiKeys.create(agentId, label);
  }

  /** At once on every gateway (the key index hears it through PostgreSQL NOTIFY). Revoking twice keeps the first time. */
  @Post('api-keys/:keyId/revoke')
  @HttpCode(200)
  revoke(@Param('keyId') keyId: string): Promise<ApiKeyView> {
    return this.apiKeys.revoke(keyId);
  }
}
