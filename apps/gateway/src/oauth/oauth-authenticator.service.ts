import { Inject, Injectable, Logger } from '@nestjs/common';
import { AGENT_ID_PATTERN } from '@mcpgw/contracts';
import { createHash } from 'node:crypto';
import { decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import { oauthPrincipalId, type OAuthPrincipal } from '../auth/principal';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { IssuerKeys } from './issuer-keys';
import { parseIssuers } from './issuer-urls';
import { TokenIntrospection } from './token-introspection';
import { parseToolsByClaim, toolsOf, type ToolsByClaim } from './tools-by-claim';

export type OAuthResult =
  | { ok: true; principal: OAuthPrincipal }
  /** 401 `invalid_token`, 403 `insufficient_scope`, or 503 when the issuer's keys cannot be read. */
  | {
      ok: false;
      status: 401 | 403 | 503;
      error: 'invalid_token' | 'insufficient_scope' | 'temporarily_unavailable';
      reason: string;
    };

/**
 * Resource-server mode (README.md here): an `Authorization: Bearer` JWT access
 * token (RFC 9068) of a trusted issuer, for this agent's resource identifier
 * (RFC 8707 audience), with the scopes the agent endpoints need. The token
 * itself is never kept, logged or passed on: the principal is its issuer and
 * subject.
 */
@Injectable()
export class OAuthAuthenticator {
  private readonly logger = new Logger(OAuthAuthenticator.name);
  readonly enabled: boolean;
  readonly issuers: string[];
  readonly scopes: string[];
  private readonly algorithms: string[];
  private readonly keys: IssuerKeys;
  private readonly toolsByClaim?: ToolsByClaim;
  private readonly introspection?: TokenIntrospection;

  constructor(@Inject(GATEWAY_ENV) private readonly env: GatewayEnv) {
    this.issuers = parseIssuers(env.OAUTH_ISSUERS);
    this.enabled = this.issuers.length > 0;
    this.scopes = env.OAUTH_SCOPES.split(/[ ,]+/).filter(Boolean);
    this.algorithms = env.OAUTH_ALGORITHMS.split(',');
    this.keys = new IssuerKeys(env.OAUTH_JWKS_REFETCH_MS);
    if (env.OAUTH_TOOLS_CLAIM) this.toolsByClaim = parseToolsByClaim(env.OAUTH_TOOLS_BY_CLAIM);
    if (env.OAUTH_INTROSPECTION_ISSUER) {
      this.introspection = new TokenIntrospection(
        {
          issuer: env.OAUTH_INTROSPECTION_ISSUER,
          clientId: env.OAUTH_INTROSPECTION_CLIENT_ID,
          clientSecret: env.OAUTH_INTROSPECTION_CLIENT_SECRET,
        },
        this.keys,
      );
    }
  }

  /** The agent's resource identifier: the audience its tokens name. */
  resourceOf(agentId: string): string {
    return `${this.env.PUBLIC_BASE_URL}/${agentId}/mcp`;
  }

  /**
   * The agent a JWT access token names in `aud` (unverified: `authenticate`
   * verifies it for that agent), for endpoints whose path names no agent.
   */
  agentOf(token: string): string | undefined {
    let audience: unknown;
    try {
      audience = decodeJwt(token).aud;
    } catch {
      return undefined;
    }
    const prefix = `${this.env.PUBLIC_BASE_URL}/`;
    for (const aud of Array.isArray(audience) ? audience : [audience]) {
      if (typeof aud !== 'string' || !aud.startsWith(prefix) || !aud.endsWith('/mcp')) continue;
      const agentId = aud.slice(prefix.length, -'/mcp'.length);
      if (AGENT_ID_PATTERN.test(agentId)) return agentId;
    }
    return undefined;
  }

  /** Where the agent's protected-resource metadata is (RFC 9728, the path-suffixed form). */
  metadataUrlOf(agentId: string): string {
    return `${this.env.PUBLIC_BASE_URL}/.well-known/oauth-protected-resource/${agentId}/mcp`;
  }

  /** The `WWW-Authenticate` of a refusal (RFC 6750 §3, RFC 9728 §5.1): where to learn how to get a token. */
  challenge(agentId: string, refusal?: { error: string; reason: string }): string {
    const params = [
      ...(refusal && refusal.error !== 'temporarily_unavailable'
        ? [`error="${refusal.error}"`, `error_description="${refusal.reason}"`]
        : []),
      `scope="${this.scopes.join(' ')}"`,
      `resource_metadata="${this.metadataUrlOf(agentId)}"`,
    ];
    return `Bearer ${params.join(', ')}`;
  }

  async authenticate(token: string, agentId: string): Promise<OAuthResult> {
    let issuer: string | undefined;
    try {
      issuer = decodeJwt(token).iss;
    } catch {
      if (this.introspection) return this.opaque(token, agentId);
      return invalid('the access token is not a JWT');
    }
    if (!issuer || !this.issuers.includes(issuer)) return invalid('the access token is not from a trusted issuer');
    let keys: Awaited<ReturnType<IssuerKeys['forIssuer']>>;
    try {
      keys = await this.keys.forIssuer(issuer);
    } catch (error) {
      this.logger.warn({ msg: 'issuer discovery failed', issuer, error: (error as Error).message });
      return unavailable("the issuer's keys cannot be read now");
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer,
        audience: this.resourceOf(agentId),
        algorithms: this.algorithms,
        clockTolerance: this.env.OAUTH_CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      return invalid(refusalOf(error));
    }
    return this.principalOf(issuer, payload.sub!, payload, agentId);
  }

  /**
   * A token that is not a JWT, asked about at the introspection issuer (RFC
   * 7662), then held to the same rules: active, that issuer, this agent's
   * resource in `aud`, unexpired; its subject `sub` (or, for a machine
   * client's token without one, `client_id`).
   */
  private async opaque(token: string, agentId: string): Promise<OAuthResult> {
    const introspection = this.introspection!;
    const answer = await introspection.introspect(token);
    if ('unavailable' in answer) {
      this.logger.warn({ msg: 'token introspection failed', issuer: introspection.issuer, error: answer.unavailable });
      return unavailable('the issuer cannot be asked about the access token now');
    }
    if (!answer.active) return invalid('the access token is not active');
    const { claims } = answer;
    if (claims.iss !== undefined && claims.iss !== introspection.issuer) {
      return invalid('the access token is not from a trusted issuer');
    }
    const audience = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audience.includes(this.resourceOf(agentId))) return invalid('the access token is for another resource');
    const now = Date.now() / 1000;
    const tolerance = this.env.OAUTH_CLOCK_TOLERANCE_SECONDS;
    if (typeof claims.exp === 'number' && claims.exp + tolerance <= now) return invalid('the access token expired');
    if (typeof claims.nbf === 'number' && claims.nbf - tolerance > now)
      return invalid('the access token is not valid yet');
    const subject = typeof claims.sub === 'string' ? claims.sub : claims.client_id;
    if (typeof subject !== 'string' || !subject) return invalid('the access token names no subject');
    return this.principalOf(introspection.issuer, subject, claims, agentId);
  }

  /** The caller a verified token names: its scopes checked, its tools chosen. */
  private principalOf(issuer: string, subject: string, claims: JWTPayload, agentId: string): OAuthResult {
    const scopes = scopesOf(claims);
    const missing = this.scopes.filter((scope) => !scopes.includes(scope));
    if (missing.length) {
      return {
        ok: false,
        status: 403,
        error: 'insufficient_scope',
        reason: `the access token lacks ${missing.join(' ')}`,
      };
    }
    const digest = createHash('sha256').update(`${issuer}\n${subject}`).digest('base64url').slice(0, 22);
    return {
      ok: true,
      principal: {
        kind: 'oauth',
        id: oauthPrincipalId(digest),
        callerId: oauthPrincipalId(digest),
        agentId,
        issuer,
        subject,
        scopes,
        ...(this.toolsByClaim && { tools: toolsOf(this.toolsByClaim, claims[this.env.OAUTH_TOOLS_CLAIM]) }),
      },
    };
  }
}

function unavailable(reason: string): OAuthResult {
  return { ok: false, status: 503, error: 'temporarily_unavailable', reason };
}

function invalid(reason: string): OAuthResult {
  return { ok: false, status: 401, error: 'invalid_token', reason };
}

/** What the caller is told of a token that failed verification: the kind of failure, no more. */
function refusalOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'the access token expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return 'the access token is for another resource';
    if (error.claim === 'nbf') return 'the access token is not valid yet';
    return `the access token's ${error.claim} claim is not accepted`;
  }
  if (error instanceof errors.JWKSNoMatchingKey)
    return 'the access token is signed with a key its issuer does not publish';
  if (error instanceof errors.JOSEAlgNotAllowed) return "the access token's algorithm is not accepted";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the access token's signature does not verify";
  return 'the access token is not valid';
}

/** The token's scopes: `scope` (RFC 9068: space-separated), or `scp` (a list, as Entra and Okta send it). */
function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === 'string') return payload.scope.split(' ').filter(Boolean);
  if (Array.isArray(payload.scp)) return payload.scp.filter((s): s is string => typeof s === 'string');
  if (typeof payload.scp === 'string') return payload.scp.split(' ').filter(Boolean);
  return [];
}
