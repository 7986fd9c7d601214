import { AGENT_ID_PATTERN, InvalidRequestError } from '@mcpgw/contracts';
import { readFileSync, writeFileSync } from 'node:fs';
import type { IssuedAgentUser, NatsCredentialView } from '../nats/nats-credentials.store';
import type { Command } from './commands';
import { MAX_CREDENTIALS_TTL, issueAgentCredentials, revokeAgentCredentials } from './operations/nats-credentials';
import { optionalFlag, requireFlag } from './flags';

/**
 * `agent credentials` (issue, with --ttl, to --out), `agent credentials list`,
 * `record --file` (nats-init's agent users) and `revoke --agent|--user`: an
 * agent's NATS users, signed with the account signing key, revoked through the
 * system account (docs/admin.md, "NATS credentials").
 */
export const agentCredentials: Command = async (deps, { words, flags }) => {
  const { natsCredentials } = deps;
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
    const revoked = await revokeAgentCredentials(deps, {
      agent: optionalFlag(flags, 'agent'),
      user: optionalFlag(flags, 'user'),
    });
    return {
      json: revoked,
      text: `revoked NATS user(s) ${revoked.revoked.join(', ')}: their connections are closed`,
    };
  }
  if (words.length > 2) throw new InvalidRequestError(`unknown: agent credentials ${words.slice(2).join(' ')}`);
  const agentId = requireFlag(flags, 'agent');
  const ttlFlag = optionalFlag(flags, 'ttl');
  if (ttlFlag !== undefined && !/^\d+$/.test(ttlFlag)) {
    throw new InvalidRequestError(`--ttl must be 1 to ${MAX_CREDENTIALS_TTL} seconds`);
  }
  const { creds, ...view } = await issueAgentCredentials(
    deps,
    agentId,
    ttlFlag === undefined ? undefined : Number(ttlFlag),
  );
  const out = optionalFlag(flags, 'out');
  if (out) {
    writeFileSync(out, creds, { mode: 0o600 });
    return {
      json: { ...view, file: out },
      text: `NATS credentials for agent ${agentId} (user ${view.user}) written to ${out}; pods use NATS_CREDS=${out}`,
    };
  }
  return {
    json: { ...view, creds },
    text: `${creds}
(user ${view.user}: revoke with agent credentials revoke --user ${view.user})`,
  };
};

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
