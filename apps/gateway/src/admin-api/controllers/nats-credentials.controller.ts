import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { InvalidRequestError } from '@mcpgw/contracts';
import { AgentsStore } from '../../agents/agents.store';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import { NatsCredentialsStore, type NatsCredentialView } from '../../nats/nats-credentials.store';
import { requireAgent } from '../../admin/operations/agents';
import {
  issueAgentCredentials,
  revokeAgentCredentials,
  type IssuedCredentials,
  type NatsCredentialsDeps,
} from '../../admin/operations/nats-credentials';
import { objectBody, optionalString } from '../request-body';

/**
 * Agents' NATS credentials (the CLI's `agent credentials`, `list`, `revoke`):
 * a creds file is in its creation's answer only; the gateway records the user's
 * public key. Needs the gateway's NATS_ACCOUNT_* / NATS_OPERATOR_SEED_FILE /
 * NATS_SYSTEM_CREDS settings (without them: 400 saying which is missing).
 */
@Controller('admin/v1')
export class NatsCredentialsController {
  private readonly deps: NatsCredentialsDeps;

  constructor(
    private readonly agents: AgentsStore,
    natsCredentials: NatsCredentialsStore,
    @Inject(GATEWAY_ENV) env: GatewayEnv,
  ) {
    this.deps = { env, natsCredentials };
  }

  @Get('nats-credentials')
  async list(@Query('agent_id') agentId?: string): Promise<{ items: NatsCredentialView[] }> {
    return { items: await this.deps.natsCredentials.list(agentId || undefined) };
  }

  @Post('agents/:agentId/nats-credentials')
  @HttpCode(201)
  async issue(@Param('agentId') agentId: string, @Body() body: unknown): Promise<IssuedCredentials> {
    const { ttl_seconds: ttl } = objectBody(body, ['ttl_seconds']);
    if (ttl !== undefined && typeof ttl !== 'number') {
      throw new InvalidRequestError('ttl_seconds: a whole number of seconds');
    }
    await requireAgent(this.agents, agentId);
    return issueAgentCredentials(this.deps, agentId, ttl);
  }

  /** All of an agent's (`agent_id`) or one user (`user`): the servers close their connections at once. */
  @Post('nats-credentials/revoke')
  @HttpCode(200)
  revoke(@Body() body: unknown): Promise<{ revoked: string[] }> {
    const fields = objectBody(body, ['agent_id', 'user']);
    return revokeAgentCredentials(this.deps, {
      agent: optionalString(fields, 'agent_id', 64),
      user: optionalString(fields, 'user', 56),
    });
  }
}
