import { AGENT_ID_PATTERN, InvalidRequestError } from '@mcpgw/contracts';
import { issueCredentials, revokeUsers } from '@mcpgw/bus';
import { readFileSync, writeFileSync } from 'node:fs';
import type { IssuedAgentUser, NatsCredentialView } from '../nats/nats-credentials.store';
import type { Command } from './commands';
import { optionalFlag, requireFlag } from './flags';

/**
 * `agent credentials` (issue, with --ttl, to --out), `agent credentials list`,
 * `record --file` (nats-init's agent users) and `revoke --agent|--user`: an
 * agent's NATS users, signed with the account signing key, revoked through the
 * system account (README, "NATS credentials").
 */
export const agentCredentials: Command = async ({ env, natsCredentials }, { words, flags }) => {
  if (words[2] === 'list') {
    const list = await natsCredentials.list(optionalFlag(flags, 'agent'));
    return {
      json: list,
      text: list.length
        ? list.map((c) => `${c.user}\tagent=${c.agent_id}\t${credentialState(c)}`).join('\n')
        : '(no NATS credentials issued)',
    };
  }
  if (words[2] === 'record') {
    const file = requireFlag(flags, 'file');
    const users = issuedAgentUsers(file);
    const recorded = await natsCredentials.recordIssued(users);
    return {
      json: { recorded, known: users.length - recorded.length },
      text: `recorded ${recorded.length} NATS user(s) from ${file} (${users.length - recorded.length} known already)`,
    };
  }
  if (words[2] === 'revoke') {
    const agent = optionalFlag(flags, 'agent');
    const user = optionalFlag(flags, 'user');
    if (!agent === !user)
      throw new InvalidRequestError('agent credentials revoke needs --agent <agent> or --user <U…>');
    if (user && !/^U[A-Z2-7]{55}$/.test(user)) {
      throw new InvalidRequestError('--user must be a NATS user public key (U…)');
    }
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
    return {
      json: { revoked: users },
      text: `revoked NATS user(s) ${users.join(', ')}: their connections are closed`,
    };
  }
  if (words.length > 2) throw new InvalidRequestError(`unknown: agent credentials ${words.slice(2).join(' ')}`);
  const agentId = requireFlag(flags, 'agent');
  if (!AGENT_ID_PATTERN.test(agentId)) throw new InvalidRequestError(`${agentId}: use 1-64 of A-Z a-z 0-9 _ -`);
  const ttlFlag = optionalFlag(flags, 'ttl');
  const ttl = ttlFlag === undefined ? undefined : Number(ttlFlag);
  if (
    ttl !== undefined &&
    (!/^\d+$/.test(ttlFlag!) || !Number.isSafeInteger(ttl) || ttl < 1 || ttl > MAX_CREDENTIALS_TTL)
  ) {
    throw new InvalidRequestError(`--ttl must be 1 to ${MAX_CREDENTIALS_TTL} seconds`);
  }
  const issued = await issueCredentials({
    account: accountKey(env.NATS_ACCOUNT_PUBLIC_KEY),
    signingSeed: readSecret('NATS_ACCOUNT_SIGNING_SEED_FILE', env.NATS_ACCOUNT_SIGNING_SEED_FILE),
    prefix: env.BUS_PREFIX,
    identity: { role: 'agent', agentId },
    expiresInSeconds: ttl,
  }).catch((error: Error) => {
    throw new InvalidRequestError(error.message);
  });
  await natsCredentials.record(issued.user, agentId, issued.expiresAt);
  const out = optionalFlag(flags, 'out');
  const view = {
    agent_id: agentId,
    user: issued.user,
    bus_prefix: env.BUS_PREFIX,
    issued_at: issued.issuedAt,
    expires_at: issued.expiresAt ?? null,
  };
  if (out) {
    writeFileSync(out, issued.creds, { mode: 0o600 });
    return {
      json: { ...view, file: out },
      text: `NATS credentials for agent ${agentId} (user ${issued.user}) written to ${out}; pods use NATS_CREDS=${out}`,
    };
  }
  return {
    json: { ...view, creds: issued.creds },
    text: `${issued.creds}
(user ${issued.user}: revoke with agent credentials revoke --user ${issued.user})`,
  };
};

/** The longest `agent credentials --ttl`: a year (rotate sooner; without --ttl they never expire). */
const MAX_CREDENTIALS_TTL = 366 * 86_400;

function credentialState(c: NatsCredentialView): string {
  if (c.revoked_at) return `revoked ${c.revoked_at}`;
  if (c.expires_at) return `${Date.parse(c.expires_at) <= Date.now() ? 'expired' : 'expires'} ${c.expires_at}`;
  return 'active, never expires';
}

/** nats-init's agent-users.json: [{user, agent_id, issued_at, expires_at?}], checked entry by entry. */
function issuedAgentUsers(file: string): IssuedAgentUser[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new InvalidRequestError(`${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new InvalidRequestError(`${file}: not a list of users`);
  return parsed.map((entry: Record<string, unknown>, i) => {
    const { user, agent_id: agentId, issued_at: issuedAt, expires_at: expiresAt } = entry ?? {};
    const whole = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n > 0;
    if (
      typeof user !== 'string' ||
      !/^U[A-Z2-7]{55}$/.test(user) ||
      typeof agentId !== 'string' ||
      !AGENT_ID_PATTERN.test(agentId) ||
      !whole(issuedAt) ||
      (expiresAt !== undefined && !whole(expiresAt))
    ) {
      throw new InvalidRequestError(`${file}: entry ${i} is not {user: U…, agent_id, issued_at[, expires_at]}`);
    }
    return {
      user,
      agent_id: agentId,
      issued_at: issuedAt as number,
      ...(expiresAt ? { expires_at: expiresAt as number } : {}),
    };
  });
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
      `${name} is not set (see README, NATS credentials; while npm start runs, it is taken from its .data/npm-start.json)`,
    );
  return value;
}
