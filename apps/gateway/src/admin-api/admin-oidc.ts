import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { AdminOidcConfig } from '../config/admin-api.env';
import { secureTransport } from '../oauth/issuer-urls';
import { AdminApiError } from './admin-api-errors';
import { sameSecret } from './session-cookies';

/**
 * OIDC login to the console (README.md beside this file, "OIDC login"): the
 * authorization code flow of a confidential client, with PKCE (S256), `state`
 * and `nonce`, the ID token checked with jose against the provider's published
 * keys (issuer, audience, expiry, nonce). The flow's three secrets live in one
 * short-lived HttpOnly cookie of this browser (`__Host-mcpgw_oidc`,
 * SameSite=Lax so that it comes back with the provider's redirect), so any
 * replica can finish a flow another began.
 */
export const OIDC_FLOW_COOKIE = '__Host-mcpgw_oidc';
/** A flow must end within this (the provider's login included). */
const FLOW_SECONDS = 600;

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
}

export interface OidcFlow {
  state: string;
  nonce: string;
  verifier: string;
}

/** Who logged in, as the provider says: the ID token's claims that were checked. */
export interface OidcIdentity {
  sub: string;
  email?: string;
}

export class AdminOidc {
  private discovery?: Promise<Discovery>;
  private jwks?: ReturnType<typeof createRemoteJWKSet>;

  constructor(readonly config: AdminOidcConfig) {}

  /** Where to send the browser, and the cookie that holds the flow's secrets. */
  async begin(): Promise<{ location: string; cookie: string }> {
    const { authorization_endpoint: endpoint } = await this.metadata();
    const flow: OidcFlow = { state: random(), nonce: random(), verifier: random() };
    const url = new URL(endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.config.clientId,
      redirect_uri: this.config.redirectUrl,
      scope: this.config.emails.size ? 'openid email' : 'openid',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: createHash('sha256').update(flow.verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const value = Buffer.from(JSON.stringify(flow)).toString('base64url');
    return { location: url.href, cookie: flowCookie(value, FLOW_SECONDS) };
  }

  /**
   * The callback: the state must be this browser's (else 400 before anything is
   * sent to the provider), the code is exchanged with the PKCE verifier, the ID
   * token verified, its nonce this flow's, and its subject (or verified e-mail)
   * allowed, else 401.
   */
  async finish(query: Record<string, unknown>, flowCookieValue: string | undefined): Promise<OidcIdentity> {
    const flow = parseFlow(flowCookieValue);
    const state = typeof query.state === 'string' ? query.state : undefined;
    if (!flow || !sameSecret(state, flow.state)) {
      throw new AdminApiError(400, 'invalid_request', 'the login did not start here, or took too long: start again');
    }
    if (typeof query.error === 'string') {
      throw new AdminApiError(401, 'unauthorized', `the provider refused the login (${query.error.slice(0, 100)})`);
    }
    if (typeof query.code !== 'string' || !query.code) throw new AdminApiError(400, 'invalid_request', 'no code');
    const metadata = await this.metadata();
    const response = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${formEncode(this.config.clientId)}:${formEncode(this.config.clientSecret)}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: query.code,
        redirect_uri: this.config.redirectUrl,
        code_verifier: flow.verifier,
      }),
      signal: AbortSignal.timeout(10_000),
    }).catch(() => undefined);
    const tokens = response?.ok ? ((await response.json().catch(() => ({}))) as { id_token?: unknown }) : undefined;
    if (typeof tokens?.id_token !== 'string') {
      throw new AdminApiError(401, 'unauthorized', 'the provider did not exchange the code for an ID token');
    }
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(tokens.id_token, this.keys(metadata), {
        issuer: metadata.issuer,
        audience: this.config.clientId,
        algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      }));
    } catch {
      throw new AdminApiError(401, 'unauthorized', 'the ID token did not verify');
    }
    if (!sameSecret(claims.nonce as string | undefined, flow.nonce)) {
      throw new AdminApiError(401, 'unauthorized', 'the ID token is not for this login (nonce)');
    }
    const identity: OidcIdentity = { sub: claims.sub! };
    const email = typeof claims.email === 'string' && claims.email_verified === true ? claims.email : undefined;
    if (email) identity.email = email;
    const allowed =
      (identity.sub !== undefined && this.config.subjects.has(identity.sub)) ||
      (email !== undefined && this.config.emails.has(email.toLowerCase()));
    if (!allowed) throw new AdminApiError(401, 'unauthorized', 'this account may not use the console');
    return identity;
  }

  private metadata(): Promise<Discovery> {
    this.discovery ??= discover(this.config.issuer).catch((error: Error) => {
      this.discovery = undefined;
      throw error;
    });
    return this.discovery;
  }

  private keys(metadata: Discovery) {
    this.jwks ??= createRemoteJWKSet(new URL(metadata.jwks_uri));
    return this.jwks;
  }
}

/** The provider's metadata, whose `issuer` must be the one configured. */
async function discover(issuer: string): Promise<Discovery> {
  const response = await fetch(`${issuer}/.well-known/openid-configuration`, {
    signal: AbortSignal.timeout(10_000),
  }).catch(() => undefined);
  const metadata = response?.ok ? ((await response.json().catch(() => undefined)) as Partial<Discovery>) : undefined;
  if (
    !metadata ||
    metadata.issuer?.replace(/\/$/, '') !== issuer ||
    ![metadata.authorization_endpoint, metadata.token_endpoint, metadata.jwks_uri].every(secureEndpoint)
  ) {
    throw new AdminApiError(503, 'unavailable', `the OIDC provider ${issuer} gave no usable metadata`);
  }
  return metadata as Discovery;
}

/**
 * An endpoint of the provider's: https, or http on a loopback address only, as
 * for OAuth issuers (the client secret, the code and the signing keys travel there).
 */
function secureEndpoint(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    return secureTransport(new URL(value));
  } catch {
    return false;
  }
}

/** The flow cookie: HttpOnly, this host only, sent back on the provider's redirect (Lax) to the callback's path. */
export function flowCookie(value: string, maxAgeSeconds: number): string {
  return `${OIDC_FLOW_COOKIE}=${value}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}`;
}

function parseFlow(value: string | undefined): OidcFlow | undefined {
  if (!value) return undefined;
  try {
    const flow = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Partial<OidcFlow>;
    const ok = [flow.state, flow.nonce, flow.verifier].every((part) => typeof part === 'string' && part.length >= 43);
    return ok ? (flow as OidcFlow) : undefined;
  } catch {
    return undefined;
  }
}

function random(): string {
  return randomBytes(32).toString('base64url');
}

/** client_secret_basic encodes id and secret as form values first (RFC 6749, 2.3.1). */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}
