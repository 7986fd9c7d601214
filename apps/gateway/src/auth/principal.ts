import { createHash } from 'node:crypto';

/**
 * Who calls an agent's endpoint (surface A): one of its API keys, or a user of
 * an OAuth issuer. Either way the same isolation: `id` is what sessions bind
 * to, `callerId` what idempotency keys, quotas, tasks, files and webhooks are
 * scoped to.
 */
export type AgentPrincipal = ApiKeyPrincipal | OAuthPrincipal;

export interface ApiKeyPrincipal {
  kind: 'api_key';
  /** The key's id (never the key). */
  id: string;
  /** `apikey:<id>`. */
  callerId: string;
  agentId: string;
}

export interface OAuthPrincipal {
  kind: 'oauth';
  /** `oauth:<digest of issuer and subject>`: the same user of the same issuer, whatever the token. */
  id: string;
  /** The same as `id`. */
  callerId: string;
  agentId: string;
  issuer: string;
  /** The token's `sub`; for a machine client's opaque token without one, `client:<client_id>`. */
  subject: string;
  scopes: string[];
  /** The tools it may see and call (OAUTH_TOOLS_CLAIM); undefined: every tool. */
  tools?: readonly string[];
}

const OAUTH_PREFIX = 'oauth:';

export function apiKeyPrincipal(id: string, agentId: string): ApiKeyPrincipal {
  return { kind: 'api_key', id, callerId: `apikey:${id}`, agentId };
}

/** The caller id of a session's principal (`id`): API key ids hold no colon, OAuth ids start `oauth:`. */
export function callerIdOf(principalId: string): string {
  return principalId.startsWith(OAUTH_PREFIX) ? principalId : `apikey:${principalId}`;
}

/** Who a token speaks for: a subject (`sub`), or a machine client (`client_id`) when it names no subject. */
export type OAuthCaller = { sub: string } | { clientId: string };

/**
 * 22 characters of SHA-256 of the issuer and the caller: a user's `iss\nsub`
 * (a `sub` holds no newline), a client's `iss\nclient\n<client_id>`, so that a
 * machine client never shares the caller id of a user whose `sub` is its id.
 */
export function oauthCallerDigest(issuer: string, caller: OAuthCaller): string {
  const name = 'sub' in caller ? caller.sub : `client\n${caller.clientId}`;
  return createHash('sha256').update(`${issuer}\n${name}`).digest('base64url').slice(0, 22);
}

export function oauthPrincipalId(digest: string): string {
  return `${OAUTH_PREFIX}${digest}`;
}

/** A tool the principal may see and call: every tool, but for an OAuth caller limited by OAUTH_TOOLS_CLAIM. */
export function mayUseTool(principal: AgentPrincipal, tool: string): boolean {
  return principal.kind !== 'oauth' || principal.tools === undefined || principal.tools.includes(tool);
}

/**
 * What a call tells the agent about its caller: an OAuth user by issuer, subject
 * and scopes (never by its token); an API key nothing (the agent knows its keys).
 */
export function principalCallMeta(principal: AgentPrincipal): Record<string, unknown> | undefined {
  if (principal.kind !== 'oauth') return undefined;
  return { principal: { issuer: principal.issuer, subject: principal.subject, scopes: principal.scopes } };
}
