import { InvalidRequestError } from '@mcpgw/contracts';
import type { AdminTokenView } from '../admin-api/admin-tokens.store';
import type { Command } from './commands';
import { optionalFlag } from './flags';
import { mintConsoleToken, mintLoginLink } from './operations/admin-tokens';

/**
 * `console token [--label L] [--ttl S]` mints an admin token for the management
 * API (printed once; stored as a digest), `console token list` lists them (never
 * the tokens), `console token revoke <id>` refuses it from the next request on.
 */
export const consoleToken: Command = async ({ adminTokens }, { words, flags }) => {
  if (words[2] === 'list') {
    const list = await adminTokens.list();
    return { json: list, text: list.length ? list.map(tokenLine).join('\n') : '(no admin tokens)' };
  }
  if (words[2] === 'revoke') {
    if (!words[3]) throw new InvalidRequestError('console token revoke needs the token id');
    const revoked = await adminTokens.revoke(words[3]);
    return { json: revoked, text: `revoked admin token ${revoked.id}` };
  }
  if (words.length > 2) throw new InvalidRequestError(`unknown: console token ${words.slice(2).join(' ')}`);
  const ttl = optionalFlag(flags, 'ttl');
  if (ttl !== undefined && !/^\d+$/.test(ttl)) throw new InvalidRequestError('--ttl: a whole number of seconds');
  const created = await mintConsoleToken(adminTokens, {
    label: optionalFlag(flags, 'label'),
    ttlSeconds: ttl === undefined ? undefined : Number(ttl),
  });
  return {
    json: created,
    text: `admin token ${created.id} (expires ${created.expires_at ?? 'never'})\n${created.token}\n(shown once: store it now; send it as Authorization: Bearer <token> to the management API, ADMIN_PORT)`,
  };
};

/**
 * `console login-link [--url <console URL>] [--ttl S]`: a one-time login code
 * for the console (10 minutes unless told; used once), in a link when given the
 * console's URL. `npm start` prints one.
 */
export const consoleLoginLink: Command = async ({ loginCodes }, { words, flags }) => {
  if (words.length > 2) throw new InvalidRequestError(`unknown: console login-link ${words.slice(2).join(' ')}`);
  const ttl = optionalFlag(flags, 'ttl');
  if (ttl !== undefined && !/^\d+$/.test(ttl)) throw new InvalidRequestError('--ttl: a whole number of seconds');
  const created = await mintLoginLink(loginCodes, {
    consoleUrl: optionalFlag(flags, 'url'),
    ttlSeconds: ttl === undefined ? undefined : Number(ttl),
  });
  return {
    json: created,
    text: `${created.url ?? created.code}\n(one-time login to the console, until ${created.expires_at}; shown once)`,
  };
};

function tokenLine(token: AdminTokenView): string {
  const state = token.revoked_at
    ? `revoked ${token.revoked_at}`
    : token.expires_at && Date.parse(token.expires_at) <= Date.now()
      ? `expired ${token.expires_at}`
      : `active until ${token.expires_at ?? 'revoked'}`;
  return `${token.id}\t${token.label ?? '-'}\t${state}\tlast used ${token.last_used_at ?? 'never'}`;
}
