import { AGENT_ID_PATTERN, InvalidRequestError } from '@mcpgw/contracts';
import { issueCredentials, revokeUsers } from '@mcpgw/bus';
import { readFileSync } from 'node:fs';
import type { GatewayEnv } from '../../config/gateway.env';
import type { NatsCredentialsStore } from '../../nats/nats-credentials.store';

/**
 * An agent's NATS credentials (docs/admin.md, "NATS credentials"), once for the admin
 * CLI (`agent credentials`) and the management API: users signed with the
 * account signing key (the creds shown once, only the public key recorded),
 * revoked through the system account, which closes their connections at once.
 */

export type NatsCredentialsEnv = Pick<
  GatewayEnv,
  | 'NATS_URL'
  | 'BUS_PREFIX'
  | 'NATS_ACCOUNT_PUBLIC_KEY'
  | 'NATS_ACCOUNT_SIGNING_SEED_FILE'
  | 'NATS_OPERATOR_SEED_FILE'
  | 'NATS_SYSTEM_CREDS'
>;

export interface NatsCredentialsDeps {
  env: NatsCredentialsEnv;
  natsCredentials: NatsCredentialsStore;
}

/** The longest credentials' lifetime: a year (rotate sooner; without one they never expire). */
export const MAX_CREDENTIALS_TTL = 366 * 86_400;

const USER_KEY = /^U[A-Z2-7]{55}$/;

export interface IssuedCredentials {
  agent_id: string;
  user: string;
  bus_prefix: string;
  issued_at: number;
  expires_at: number | null;
  /** The creds file's text (the user JWT and its seed): shown once. */
  creds: string;
}

export async function issueAgentCredentials(
  { env, natsCredentials }: NatsCredentialsDeps,
  agentId: string,
  ttlSeconds?: number,
): Promise<IssuedCredentials> {
  if (!AGENT_ID_PATTERN.test(agentId)) throw new InvalidRequestError(`${agentId}: use 1-64 of A-Z a-z 0-9 _ -`);
  if (
    ttlSeconds !== undefined &&
    (!Number.isSafeInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_CREDENTIALS_TTL)
  ) {
    throw new InvalidRequestError(`--ttl must be 1 to ${MAX_CREDENTIALS_TTL} seconds`);
  }
  const issued = await issueCredentials({
    account: accountKey(env.NATS_ACCOUNT_PUBLIC_KEY),
    signingSeed: readSecret('NATS_ACCOUNT_SIGNING_SEED_FILE', env.NATS_ACCOUNT_SIGNING_SEED_FILE),
    prefix: env.BUS_PREFIX,
    identity: { role: 'agent', agentId },
    expiresInSeconds: ttlSeconds,
  }).catch((error: Error) => {
    throw new InvalidRequestError(error.message);
  });
  await natsCredentials.record(issued.user, agentId, issued.expiresAt);
  return {
    agent_id: agentId,
    user: issued.user,
    bus_prefix: env.BUS_PREFIX,
    issued_at: issued.issuedAt,
    expires_at: issued.expiresAt ?? null,
    creds: issued.creds,
  };
}

/** All of an agent's live NATS users, or one user: the servers close their connections at once. */
export async function revokeAgentCredentials(
  { env, natsCredentials }: NatsCredentialsDeps,
  target: { agent?: string; user?: string },
): Promise<{ revoked: string[] }> {
  const { agent, user } = target;
  if (!agent === !user) throw new InvalidRequestError('agent credentials revoke needs --agent <agent> or --user <U…>');
  if (user && !USER_KEY.test(user)) throw new InvalidRequestError('--user must be a NATS user public key (U…)');
  const users = user ? [user] : await natsCredentials.active(agent!);
  if (users.length === 0) throw new InvalidRequestError(`agent ${agent} has no NATS credentials to revoke`);
  await revokeUsers({
    url: env.NATS_URL,
    systemCreds: readSecret('NATS_SYSTEM_CREDS', env.NATS_SYSTEM_CREDS),
    operatorSeed: readSecret('NATS_OPERATOR_SEED_FILE', env.NATS_OPERATOR_SEED_FILE),
    account: accountKey(env.NATS_ACCOUNT_PUBLIC_KEY),
    users,
  }).catch((error: Error) => {
    throw new InvalidRequestError(`revocation failed: ${error.message}`);
  });
  await natsCredentials.markRevoked(users);
  return { revoked: users };
}

/** A secret from the file a setting names; the secret itself is never printed. */
function readSecret(name: string, path: string): string {
  requireSetting(name, path);
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new InvalidRequestError(
      `${name}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    );
  }
}

/** The account's public key, or the file that holds it (account.pub of nats-init). */
function accountKey(value: string): string {
  requireSetting('NATS_ACCOUNT_PUBLIC_KEY', value);
  return /^A[A-Z2-7]{55}$/.test(value) ? value : readSecret('NATS_ACCOUNT_PUBLIC_KEY', value).trim();
}

function requireSetting(name: string, value: string): string {
  if (!value)
    throw new InvalidRequestError(
      `${name} is not set (see docs/admin.md, NATS credentials; while npm start runs, it is taken from its .data/npm-start.json)`,
    );
  return value;
}
