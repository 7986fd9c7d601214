import { Inject, Injectable, Logger } from '@nestjs/common';
import { AGENT_ID_PATTERN } from '@mcpgw/contracts';
import { decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import { oauthPrincipalId, type OAuthCaller, oauthCallerDigest, type OAuthPrincipal } from '../auth/principal';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { gatewaySecretKind } from './gateway-secrets';
import { IssuerKeys } from './issuer-keys';
import { issuersReaching, loadPolicy, type IssuerPolicy } from './oauth-policy';
import { TokenIntrospection } from './token-introspection';
import { toolsOf } from './tools-by-claim';

export type OAuthResult =
  | { ok: true; principal: OAuthPrincipal }
  /**
   * 401 `invalid_token`, 403 `insufficient_scope` (`scopes`: the issuer's, to
   * ask for), 503 when the issuer's keys cannot be read, 429 when the client's
   * address has had too many unknown tokens introspected.
   */
  | {
      ok: false;
      status: 401 | 403 | 429 | 503;
      error: 'invalid_token' | 'insufficient_scope' | 'temporarily_unavailable';
      reason: string;
      scopes?: readonly string[];
    };

/**
 * Resource-server mode (README.md here): an `Authorization: Bearer` JWT access
 * token (RFC 9068) of an issuer the policy lets reach this agent, for this
 * agent's resource identifier (RFC 8707 audience), with the scopes that issuer
 * must grant. The token itself is never kept, logged or passed on: the
 * principal is its issuer and subject.
 */
@Injectable()
export class OAuthAuthenticator {
  private readonly logger = new Logger(OAuthAuthenticator.name);
  readonly enabled: boolean;
  private readonly policy: IssuerPolicy[];
  private readonly algorithms: string[];
  private readonly keys: IssuerKeys;
  private readonly introspection?: TokenIntrospection;

  constructor(@Inject(GATEWAY_ENV) private readonly env: GatewayEnv) {
    this.policy = loadPolicy(env);
    this.enabled = this.policy.length > 0;
    this.algorithms = env.OAUTH_ALGORITHMS.split(',');
    this.keys = new IssuerKeys(env.OAUTH_JWKS_REFETCH_MS);
    if (env.OAUTH_INTROSPECTION_ISSUER) {
      this.introspection = new TokenIntrospection(
        {
          issuer: env.OAUTH_INTROSPECTION_ISSUER,
          clientId: env.OAUTH_INTROSPECTION_CLIENT_ID,
          clientSecret: env.OAUTH_INTROSPECTION_CLIENT_SECRET,
          activeForMs: env.OAUTH_INTROSPECTION_CACHE_SECONDS * 1000,
          perSourcePerMinute: env.OAUTH_INTROSPECTION_PER_SOURCE_PER_MINUTE,
        },
        this.keys,
      );
    }
  }

  /** The issuers whose tokens may open this agent's endpoint (none: OAuth is off for it). */
  issuersOf(agentId: string): string[] {
    return issuersReaching(this.policy, agentId).map((p) => p.issuer);
  }

  /**
   * The scopes a token for this agent needs, when every issuer reaching it
   * needs the same; undefined when they differ (a client then learns its
   * issuer's from the 403 `insufficient_scope` that names them).
   */
  scopesOf(agentId: string): readonly string[] | undefined {
    const [first, ...rest] = issuersReaching(this.policy, agentId).map((p) => p.scopes);
    const same = (a: readonly string[], b: readonly string[]) =>
      a.length === b.length && a.every((scope) => b.includes(scope));
    return first && rest.every((scopes) => same(first, scopes)) ? first : undefined;
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
  challenge(agentId: string, refusal?: { error: string; reason: string; scopes?: readonly string[] }): string {
    const scopes = refusal?.scopes ?? this.scopesOf(agentId);
    const params = [
      ...(refusal && refusal.error !== 'temporarily_unavailable'
        ? [`error="${refusal.error}"`, `error_description="${refusal.reason}"`]
        : []),
      ...(scopes ? [`scope="${scopes.join(' ')}"`] : []),
      `resource_metadata="${this.metadataUrlOf(agentId)}"`,
    ];
    return `Bearer ${params.join(', ')}`;
  }

  /**
   * The caller a bearer token names on this agent's endpoint. `source`: the
   * client's address, which an opaque token's introspection is counted against.
   */
  async authenticate(token: string, agentId: string, source: string): Promise<OAuthResult> {
    const secret = gatewaySecretKind(token);
    if (secret) return invalid(`the bearer token is ${secret} of this gateway, not an access token`);
    let issuer: string | undefined;
    try {
      issuer = decodeJwt(token).iss;
    } catch {
      const introspection = this.introspection && this.policyOf(this.introspection.issuer, agentId);
      if (introspection) return this.opaque(token, agentId, source, introspection);
      return invalid('the access token is not a JWT');
    }
    // An issuer the policy does not let reach this agent is, here, as untrusted as any other.
    const policy = issuer ? this.policyOf(issuer, agentId) : undefined;
    if (!issuer || !policy) return invalid('the access token is not from a trusted issuer');
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
    return this.principalOf(policy, { sub: payload.sub! }, payload, agentId);
  }

  private policyOf(issuer: string, agentId: string): IssuerPolicy | undefined {
    return issuersReaching(this.policy, agentId).find((p) => p.issuer === issuer);
  }

  /**
   * A token that is not a JWT, asked about at the introspection issuer (RFC
   * 7662), then held to the same rules: active, that issuer, this agent's
   * resource in `aud`, unexpired; its subject `sub` (or, for a machine
   * client's token without one, `client_id`).
   */
  private async opaque(token: string, agentId: string, source: string, policy: IssuerPolicy): Promise<OAuthResult> {
    const introspection = this.introspection!;
    const answer = await introspection.introspect(token, source);
    if ('unavailable' in answer) {
      if (answer.status === 429) {
        return { ok: false, status: 429, error: 'temporarily_unavailable', reason: answer.unavailable };
      }
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
    // A machine client's token without `sub` is the client's, never a user's of the same name.
    const caller: OAuthCaller | undefined =
      typeof claims.sub === 'string'
        ? { sub: claims.sub }
        : typeof claims.client_id === 'string' && claims.client_id
          ? { clientId: claims.client_id }
          : undefined;
    if (!caller || ('sub' in caller && !caller.sub)) return invalid('the access token names no subject');
    return this.principalOf(policy, caller, claims, agentId);
  }

  /** The caller a verified token names: its subject checked, its issuer's scopes checked, its tools chosen. */
  private principalOf(policy: IssuerPolicy, caller: OAuthCaller, claims: JWTPayload, agentId: string): OAuthResult {
    // Control characters in `sub` are refused: they are no one's name, and keep callers' digests apart.
    if ('sub' in caller && /[\x00-\x1f\x7f]/.test(caller.sub))
      return invalid("the access token's sub claim is not accepted");
    const scopes = scopesOf(claims);
    const missing = policy.scopes.filter((scope) => !scopes.includes(scope));
    if (missing.length) {
      return {
        ok: false,
        status: 403,
        error: 'insufficient_scope',
        reason: `the access token lacks ${missing.join(' ')}`,
        scopes: policy.scopes,
      };
    }
    const id = oauthPrincipalId(oauthCallerDigest(policy.issuer, caller));
    return {
      ok: true,
      principal: {
        kind: 'oauth',
        id,
        callerId: id,
        agentId,
        issuer: policy.issuer,
        subject: 'sub' in caller ? caller.sub : `client:${caller.clientId}`,
        scopes,
        ...(policy.tools && { tools: toolsOf(policy.tools.byValue, claims[policy.tools.claim]) }),
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
