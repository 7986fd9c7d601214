/**
 * The user JWT's claims of a creds file, not verified (the server verifies):
 * for the inbox prefix, expiry and logs. Read without a JWT library so that an
 * agent (the agent SDK) can check its credentials with only `nats` installed.
 */
export function credsClaims(creds: string): {
  name?: string;
  sub?: string;
  subAllow: string[];
  iat?: number;
  exp?: number;
} {
  const match = /-----BEGIN NATS USER JWT-----\s*([^\s-][^\s]*)\s*-/.exec(creds);
  if (!match) throw new Error('not a NATS credentials file');
  const claims = jwtPayload(match[1]);
  const nats = (claims.nats ?? {}) as { sub?: { allow?: unknown } };
  const allow = nats.sub?.allow;
  return {
    name: typeof claims.name === 'string' ? claims.name : undefined,
    sub: typeof claims.sub === 'string' ? claims.sub : undefined,
    subAllow: Array.isArray(allow) ? allow.filter((s): s is string => typeof s === 'string') : [],
    ...(typeof claims.iat === 'number' && claims.iat ? { iat: claims.iat } : {}),
    ...(typeof claims.exp === 'number' && claims.exp ? { exp: claims.exp } : {}),
  };
}

function jwtPayload(jwt: string): Record<string, unknown> {
  const [, payload] = jwt.split('.');
  if (!payload) throw new Error('not a NATS credentials file');
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new Error('not a NATS credentials file');
  }
  if (typeof claims !== 'object' || claims === null) throw new Error('not a NATS credentials file');
  return claims as Record<string, unknown>;
}

/** The expiry of the user JWT this process connected with, when it has one (`NATS_CREDS`). */
const credsExpiries = new Map<string, number>();

/** Remember `creds`' expiry for /metrics (`natsCredentialsExpiryMetric`); a JWT without `exp` adds nothing. */
export function noteCredsExpiry(creds: string): void {
  const claims = credsClaims(creds);
  if (claims.exp) credsExpiries.set(claims.name ?? claims.sub ?? 'unknown', claims.exp);
}

/** The gauge `mcpgw_nats_credentials_expiry_timestamp_seconds{user}`: when this process's NATS user JWT expires. */
export const natsCredentialsExpiryMetric = {
  name: 'mcpgw_nats_credentials_expiry_timestamp_seconds',
  help: 'When the NATS user JWT this process connects with expires (Unix seconds; no series when it never expires)',
  labelNames: ['user'] as const,
  kind: 'gauge' as const,
  read: (): Iterable<[{ user: string }, number]> => [...credsExpiries].map(([user, exp]) => [{ user }, exp]),
};
