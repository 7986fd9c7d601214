import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { InvalidRequestError } from '@mcpgw/contracts';
import { AgentsStore } from '../../agents/agents.store';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import { GrantKeysService } from '../../grants/grant-keys.service';
import { GrantRevocationsStore } from '../../grants/grant-revocations.store';
import { PersonalAccessTokensStore, type PatView } from '../../grants/personal-access-tokens.store';
import { createPat, mintGrant, revokeGrant, type GrantDeps, type MintedGrant } from '../../admin/operations/grants';
import { objectBody, optionalString } from '../request-body';

/**
 * RuntimeGrants (the CLI's `grant mint|revoke`) and personal access tokens
 * (`pat create|list|revoke`). A grant or a token is in its creation's answer
 * and nowhere else, ever: grants are not stored at all (only revocations),
 * tokens as digests.
 */
@Controller('admin/v1')
export class GrantsController {
  private readonly deps: GrantDeps;

  constructor(
    agents: AgentsStore,
    grantKeys: GrantKeysService,
    revocations: GrantRevocationsStore,
    @Inject(GATEWAY_ENV) env: GatewayEnv,
    private readonly pats: PersonalAccessTokensStore,
  ) {
    this.deps = { agents, grantKeys, revocations, maxGrantTtlSeconds: env.GRANT_MAX_TTL_SECONDS };
  }

  @Post('grants')
  @HttpCode(201)
  mint(@Body() body: unknown): Promise<MintedGrant> {
    const fields = objectBody(body, ['workspace_id', 'agent_id', 'task_id', 'tools', 'credentials', 'ttl_seconds']);
    const ttl = fields.ttl_seconds ?? 3600;
    if (typeof ttl !== 'number') throw new InvalidRequestError('ttl_seconds: a whole number of seconds');
    return mintGrant(this.deps, {
      workspaceId: requiredString(fields, 'workspace_id'),
      agentId: requiredString(fields, 'agent_id'),
      taskId: requiredString(fields, 'task_id'),
      tools: strings(fields, 'tools'),
      credentials: fields.credentials === undefined ? [] : strings(fields, 'credentials'),
      ttlSeconds: ttl,
    });
  }

  /** At once on every gateway; revoking twice keeps the first time. */
  @Post('grants/:grantId/revoke')
  @HttpCode(200)
  revoke(@Param('grantId') grantId: string): Promise<{ grant_id: string; revoked_at: string }> {
    return revokeGrant(this.deps, grantId);
  }

  @Get('pats')
  async listPats(): Promise<{ items: PatView[] }> {
    return { items: await this.pats.list() };
  }

  @Post('pats')
  @HttpCode(201)
  createPat(@Body() body: unknown): Promise<PatView & { token: string }> {
    return createPat(this.pats, optionalString(objectBody(body, ['label']), 'label', 200));
  }

  @Post('pats/:patId/revoke')
  @HttpCode(200)
  revokePat(@Param('patId') patId: string): Promise<PatView> {
    return this.pats.revoke(patId);
  }
}

function requiredString(fields: Record<string, unknown>, name: string): string {
  const value = optionalString(fields, name, 200);
  if (!value) throw new InvalidRequestError(`${name} is required`);
  return value;
}

function strings(fields: Record<string, unknown>, name: string): string[] {
  const value = fields[name];
  if (!Array.isArray(value) || value.length > 100 || value.some((item) => typeof item !== 'string')) {
    throw new InvalidRequestError(`${name}: a list of at most 100 strings`);
  }
  return value as string[];
}
