import { randomUUID } from 'node:crypto';
import {
  SignJWT,
  decodeProtectedHeader,
  errors,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  type JWK,
  type KeyLike,
} from 'jose';

/**
 * RuntimeGrants: short-lived, task-scoped, signed tokens (JWT, EdDSA/Ed25519,
 * `typ: rg+jwt`). A grant names a workspace, an agent, a task, the tools (ids or
 * names) the task may use, the credentials it holds, an expiry and a unique id.
 * Keys are selected by `kid`, so several verification keys can be live at once
 * (rotation: add the new public key everywhere, then sign with it, then drop the old).
 */
export const GRANT_TYPE = 'rg+jwt';
export const GRANT_ISSUER = 'mcpgw';

/**
 * The audience (`aud`) of a grant: the gateway's grant surface for one workspace
 * and agent, `mcpgw:<workspace>/<agent>`. Every grant is minted with it and a
 * gateway accepts only a grant whose `aud` names it (one of several, if `aud` is
 * a list), so a token that the same key signed for another recipient (another
 * service trusting that issuer, another agent) is refused here. A grant without
 * `aud` is refused.
 */
export function grantAudience(workspaceId: string, agentId: string): string {
  return `mcpgw:${workspaceId}/${agentId}`;
}
const ALGORITHM = 'EdDSA';
/**
 * A grant's id (`jti`) is a UUID, in either case: the only ids `grant revoke` takes,
 * so a grant with any other id, which could never be revoked, is refused.
 */
const GRANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RuntimeGrant {
  /** The `jti`, a UUID, lower case once verified (as revocations are stored). */
  id: string;
  workspaceId: string;
  agentId: string;
  taskId: string;
  /** Tool ids or names the task may use. */
  tools: string[];
  /** Names of the credentials the task holds. */
  credentials: string[];
  issuedAt: Date;
  expiresAt: Date;
}

export interface GrantRequest {
  workspaceId: string;
  agentId: string;
  taskId: string;
  tools: string[];
  credentials?: string[];
  ttlSeconds: number;
}

export interface SigningKey {
  kid: string;
  key: KeyLike | Uint8Array;
}

/** Verification keys by kid. */
export type KeyRing = ReadonlyMap<string, KeyLike | Uint8Array>;

export type GrantFailure =
  'malformed' | 'unknown_key' | 'bad_signature' | 'expired' | 'not_yet_valid' | 'not_a_grant' | 'wrong_audience';

export interface GrantChecks {
  /** A grant issued longer ago than this is refused, whatever its expiry says. */
  maxAgeSeconds: number;
  /** Allowed clock difference between the minting host and this one. */
  clockToleranceSeconds?: number;
}

/** Clocks of the minting host and the gateway may differ by this much. */
const DEFAULT_CLOCK_TOLERANCE_SECONDS = 5;
export type GrantVerification =
  { ok: true; grant: RuntimeGrant } | { ok: false; failure: GrantFailure; message: string };

interface GrantClaims {
  ws: string;
  agt: string;
  tsk: string;
  tools: string[];
  creds: string[];
}

/** A new Ed25519 signing key as a private JWK (with `kid`), e.g. for a development stack. */
export async function generateSigningJwk(
  kid = `k-${new Date().toISOString().slice(0, 10)}-${randomUUID().slice(0, 8)}`,
): Promise<JWK> {
  const { privateKey } = await generateKeyPair(ALGORITHM, { crv: 'Ed25519', extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: ALGORITHM, use: 'sig' };
}

/** The public half of a JWK (drops the private members). */
export function publicJwk(jwk: JWK): JWK {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, k: _k, ...rest } = jwk;
  return rest;
}

export async function importSigningKey(jwk: JWK): Promise<SigningKey> {
  if (!jwk.kid) throw new Error('the signing key needs a "kid"');
  if (!jwk.d) throw new Error('the signing key must be a private key (with "d")');
  return { kid: jwk.kid, key: await importJWK({ ...jwk, alg: ALGORITHM }, ALGORITHM) };
}

export async function importKeyRing(jwks: JWK[]): Promise<KeyRing> {
  const ring = new Map<string, KeyLike | Uint8Array>();
  for (const jwk of jwks) {
    if (!jwk.kid) throw new Error('every verification key needs a "kid"');
    if (ring.has(jwk.kid)) throw new Error(`two verification keys share kid ${jwk.kid}`);
    ring.set(jwk.kid, await importJWK({ ...publicJwk(jwk), alg: ALGORITHM }, ALGORITHM));
  }
  return ring;
}

export async function mintRuntimeGrant(
  request: GrantRequest,
  signing: SigningKey,
): Promise<{ token: string; grant: RuntimeGrant }> {
  const now = Math.floor(Date.now() / 1000);
  const grant: RuntimeGrant = {
    id: randomUUID(),
    workspaceId: request.workspaceId,
    agentId: request.agentId,
    taskId: request.taskId,
    tools: [...request.tools],
    credentials: [...(request.credentials ?? [])],
    issuedAt: new Date(now * 1000),
    expiresAt: new Date((now + request.ttlSeconds) * 1000),
  };
  const claims: GrantClaims = {
    ws: grant.workspaceId,
    agt: grant.agentId,
    tsk: grant.taskId,
    tools: grant.tools,
    creds: grant.credentials,
  };
  const token = await new SignJWT({ ...claims })
    .setProtectedHeader({ alg: ALGORITHM, kid: signing.kid, typ: GRANT_TYPE })
    .setJti(grant.id)
    .setIssuer(GRANT_ISSUER)
    .setAudience(grantAudience(grant.workspaceId, grant.agentId))
    .setIssuedAt(now)
    .setExpirationTime(now + request.ttlSeconds)
    .sign(signing.key);
  return { token, grant };
}

/**
 * Verify signature, type, issuer, audience (grantAudience of its own workspace and
 * agent, which the caller then checks against what it serves), expiry and issue
 * time (not in the future, not older than `maxAgeSeconds`); never throws. Revocation is the caller's check.
 */
export async function verifyRuntimeGrant(
  token: string,
  ring: KeyRing,
  checks: GrantChecks,
): Promise<GrantVerification> {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    return { ok: false, failure: 'malformed', message: 'not a RuntimeGrant (malformed token)' };
  }
  const key = kid ? ring.get(kid) : undefined;
  if (!key)
    return { ok: false, failure: 'unknown_key', message: 'the grant is signed with a key this gateway does not know' };
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [ALGORITHM],
      typ: GRANT_TYPE,
      issuer: GRANT_ISSUER,
      maxTokenAge: checks.maxAgeSeconds,
      clockTolerance: checks.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS,
    });
    const claims = payload as unknown as Partial<GrantClaims>;
    if (
      typeof payload.jti !== 'string' ||
      !GRANT_ID.test(payload.jti) ||
      typeof claims.ws !== 'string' ||
      typeof claims.agt !== 'string' ||
      typeof claims.tsk !== 'string' ||
      !isStringArray(claims.tools) ||
      !isStringArray(claims.creds) ||
      typeof payload.exp !== 'number'
    ) {
      return { ok: false, failure: 'not_a_grant', message: 'the token lacks RuntimeGrant claims' };
    }
    const audience = grantAudience(claims.ws, claims.agt);
    if (payload.aud === undefined) {
      return { ok: false, failure: 'wrong_audience', message: 'the grant names no audience (aud)' };
    }
    if (!(Array.isArray(payload.aud) ? payload.aud : [payload.aud]).includes(audience)) {
      return { ok: false, failure: 'wrong_audience', message: `the grant's audience (aud) is not ${audience}` };
    }
    return {
      ok: true,
      grant: {
        // Revocations are stored lower case (grant revoke): an upper-case id must meet its revocation.
        id: payload.jti.toLowerCase(),
        workspaceId: claims.ws,
        agentId: claims.agt,
        taskId: claims.tsk,
        tools: claims.tools,
        credentials: claims.creds,
        issuedAt: new Date(payload.iat! * 1000),
        expiresAt: new Date(payload.exp * 1000),
      },
    };
  } catch (error) {
    if (error instanceof errors.JWTExpired) {
      const tooOld = error.claim === 'iat';
      return {
        ok: false,
        failure: 'expired',
        message: tooOld ? 'the grant is older than allowed' : 'the grant has expired',
      };
    }
    if (error instanceof errors.JWSSignatureVerificationFailed) {
      return { ok: false, failure: 'bad_signature', message: 'the grant signature is invalid' };
    }
    if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'iat' && error.reason === 'check_failed') {
      return { ok: false, failure: 'not_yet_valid', message: 'the grant is issued in the future' };
    }
    if (error instanceof errors.JWTClaimValidationFailed) {
      return { ok: false, failure: 'not_a_grant', message: `not a RuntimeGrant (${error.claim})` };
    }
    return { ok: false, failure: 'malformed', message: 'not a RuntimeGrant (malformed token)' };
  }
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}
