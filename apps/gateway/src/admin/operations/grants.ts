import { CREDENTIAL_NAME_PATTERN, InvalidRequestError, UnavailableError } from '@mcpgw/contracts';
import { mintRuntimeGrant } from '@mcpgw/grants';
import type { AgentsStore } from '../../agents/agents.store';
import type { GrantKeysService } from '../../grants/grant-keys.service';
import type { GrantRevocationsStore } from '../../grants/grant-revocations.store';
import type { PatView, PersonalAccessTokensStore } from '../../grants/personal-access-tokens.store';

/**
 * RuntimeGrants and personal access tokens, once for the admin CLI (`grant
 * mint|revoke`, `pat create|list|revoke`) and the management API. A grant is a
 * signed token, not a row: it is shown once, at minting, and only its
 * revocation is stored (until it would have expired anyway).
 */

export interface GrantDeps {
  agents: AgentsStore;
  grantKeys: GrantKeysService;
  revocations: GrantRevocationsStore;
  /** GRANT_MAX_TTL_SECONDS. */
  maxGrantTtlSeconds: number;
}

export interface GrantRequest {
  workspaceId: string;
  agentId: string;
  taskId: string;
  tools: string[];
  credentials: string[];
  ttlSeconds: number;
}

export interface MintedGrant {
  id: string;
  /** The RuntimeGrant (a JWT): shown once. */
  grant: string;
  workspace_id: string;
  agent_id: string;
  task_id: string;
  tools: string[];
  credentials: string[];
  expires_at: string;
}

/** A task-scoped RuntimeGrant for an agent of that workspace, signed with the current grant key. */
export async function mintGrant(deps: GrantDeps, request: GrantRequest): Promise<MintedGrant> {
  const { workspaceId, agentId, taskId, tools, credentials, ttlSeconds: ttl } = request;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > deps.maxGrantTtlSeconds) {
    throw new InvalidRequestError(`ttl must be 1 to ${deps.maxGrantTtlSeconds} seconds (GRANT_MAX_TTL_SECONDS)`);
  }
  if (!taskId || taskId.length > 200) throw new InvalidRequestError('task: 1 to 200 characters');
  if (tools.length === 0 || tools.some((tool) => !tool || tool.length > 200)) {
    throw new InvalidRequestError('tools: at least one tool name (at most 200 characters each)');
  }
  const bad = credentials.filter((c) => !CREDENTIAL_NAME_PATTERN.test(c));
  if (bad.length) throw new InvalidRequestError(`bad credential name(s): ${bad.join(', ')}`);
  const workspace = (await deps.agents.find(agentId))?.workspace_id;
  if (workspace !== workspaceId) {
    throw new InvalidRequestError(workspace ? `agent ${agentId} is in workspace ${workspace}` : `no agent ${agentId}`);
  }
  const key = await deps.grantKeys.signing().catch((error: Error) => {
    throw new UnavailableError(error.message);
  });
  const { token, grant } = await mintRuntimeGrant(
    { workspaceId, agentId, taskId, tools, credentials, ttlSeconds: ttl },
    key,
  );
  return {
    id: grant.id,
    grant: token,
    workspace_id: workspaceId,
    agent_id: agentId,
    task_id: taskId,
    tools,
    credentials,
    expires_at: grant.expiresAt.toISOString(),
  };
}

/** Refused at once on every gateway (PostgreSQL NOTIFY); revoking twice keeps the first time. */
export async function revokeGrant(
  deps: Pick<GrantDeps, 'revocations' | 'maxGrantTtlSeconds'>,
  grantId: string,
): Promise<{ grant_id: string; revoked_at: string }> {
  try {
    return await deps.revocations.revoke(grantId, deps.maxGrantTtlSeconds);
  } catch (error) {
    throw new InvalidRequestError((error as Error).message);
  }
}

/** A new personal access token: shown once, stored as a digest. */
export function createPat(pats: PersonalAccessTokensStore, label?: string): Promise<PatView & { token: string }> {
  if (label !== undefined && label.length > 200) throw new InvalidRequestError('label: at most 200 characters');
  return pats.create(label);
}
