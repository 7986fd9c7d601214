import { NoPlaceholderInProduction } from '@mcpgw/config';
import { IsInt, IsString, Matches, Max, Min, MinLength, ValidateBy, ValidateIf } from 'class-validator';
import { parseIssuers } from '../oauth/issuer-urls';
import { loadPolicy } from '../oauth/oauth-policy';
import { parseToolsByClaim } from '../oauth/tools-by-claim';

/** OAUTH_ISSUERS parses (https, or http on a loopback address), so a typo stops the start. */
function IssuerList(): PropertyDecorator {
  return ValidateBy({
    name: 'issuerList',
    validator: {
      validate: (value: unknown) => {
        try {
          return typeof value === 'string' && (parseIssuers(value), true);
        } catch {
          return false;
        }
      },
      defaultMessage: (args) => {
        try {
          parseIssuers(String(args?.value));
        } catch (error) {
          return (error as Error).message;
        }
        return 'OAUTH_ISSUERS must be a string';
      },
    },
  });
}

/**
 * The issuers and what each may do read together (oauth-policy.ts): a policy
 * that does not parse, or global settings it cannot stand beside (several
 * OAUTH_ISSUERS without one), stop the start, saying what is wrong.
 */
function IssuerPolicies(): PropertyDecorator {
  return ValidateBy({
    name: 'issuerPolicies',
    validator: {
      validate: (_value: unknown, args) => policyProblem(args?.object as OAuthSettings) === undefined,
      defaultMessage: (args) => policyProblem(args?.object as OAuthSettings) ?? 'the OAuth policy is not accepted',
    },
  });
}

function policyProblem(settings: OAuthSettings): string | undefined {
  try {
    loadPolicy(settings);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** OAUTH_INTROSPECTION_ISSUER is one of the trusted issuers (a token is only ever shown to a trusted issuer). */
function OneOfIssuers(): PropertyDecorator {
  return ValidateBy({
    name: 'oneOfIssuers',
    validator: {
      validate: (value: unknown, args) => {
        try {
          return loadPolicy(args?.object as OAuthSettings).some(({ issuer }) => issuer === value);
        } catch {
          return false;
        }
      },
      defaultMessage: () => 'OAUTH_INTROSPECTION_ISSUER must be one of the issuers (OAUTH_ISSUERS, or the policy)',
    },
  });
}

const oauthOn = (env: OAuthSettings) =>
  env.OAUTH_ISSUERS !== '' || env.OAUTH_POLICY !== '' || env.OAUTH_POLICY_FILE !== '';

/** OAUTH_TOOLS_BY_CLAIM parses, so a typo stops the start. */
function ToolsByClaim(): PropertyDecorator {
  return ValidateBy({
    name: 'toolsByClaim',
    validator: {
      validate: (value: unknown) => {
        try {
          return typeof value === 'string' && (parseToolsByClaim(value), true);
        } catch {
          return false;
        }
      },
      defaultMessage: (args) => {
        try {
          parseToolsByClaim(String(args?.value));
        } catch (error) {
          return (error as Error).message;
        }
        return 'OAUTH_TOOLS_BY_CLAIM must be a string';
      },
    },
  });
}

/** OAuth resource-server mode: MCP clients that log in with OAuth (apps/gateway/src/oauth/README.md). */
export class OAuthSettings {
  /**
   * Issuers whose access tokens the agent endpoints take, comma-separated
   * (`https://…`; `http://` only on a loopback address). Empty: OAuth is off and
   * only API keys are taken. One issuer only: several need a policy (OAUTH_POLICY).
   */
  @IssuerList()
  OAUTH_ISSUERS: string = '';

  /**
   * The trusted issuers, each with its own scopes, tools by claim and the agents
   * it may reach, as inline JSON `{"issuers": [{"issuer", "agents", "scopes",
   * "tools_claim", "tools_by_claim"}, …]}` (apps/gateway/src/oauth/README.md).
   * Instead of OAUTH_ISSUERS and the global OAUTH_TOOLS_* settings (refused beside
   * them); an unknown key or an issuer not `https` stops the start (docs/oauth.md#several-issuers).
   */
  @IssuerPolicies()
  OAUTH_POLICY: string = '';

  /** The same policy, read from this JSON file at the start. */
  @IsString()
  OAUTH_POLICY_FILE: string = '';

  /**
   * The gateway's public origin as MCP clients reach it (e.g. https://mcp.example.com,
   * no path): an agent's resource identifier is PUBLIC_BASE_URL/{agent}/mcp, the
   * audience its tokens must name. Required with OAUTH_ISSUERS.
   */
  @ValidateIf((env: OAuthSettings) => oauthOn(env) || env.PUBLIC_BASE_URL !== '')
  @Matches(/^https?:\/\/[^\s/?#@]+$/, {
    message: 'PUBLIC_BASE_URL must be an http(s) origin without a path (required with OAUTH_ISSUERS)',
  })
  PUBLIC_BASE_URL: string = '';

  /**
   * Scopes a token needs for the agent endpoints (space- or comma-separated); a
   * token without them gets 403 `insufficient_scope`. With a policy: the scopes of an issuer whose
   * entry names none.
   */
  @Matches(/^[\x21\x23-\x5B\x5D-\x7E]+([ ,]+[\x21\x23-\x5B\x5D-\x7E]+)*$/, {
    message: 'OAUTH_SCOPES must be scope names, separated by spaces or commas',
  })
  OAUTH_SCOPES: string = 'mcp:tools';

  /** JWS algorithms a token may be signed with (comma-separated); `none` and HMAC are never taken. */
  @Matches(/^((RS|PS|ES)(256|384|512)|EdDSA|ES256K)(,((RS|PS|ES)(256|384|512)|EdDSA|ES256K))*$/, {
    message: 'OAUTH_ALGORITHMS must list asymmetric JWS algorithms (RS256, PS256, ES256, EdDSA…), comma-separated',
  })
  OAUTH_ALGORITHMS: string = 'RS256,PS256,ES256,EdDSA';

  /** Clock skew allowed on `exp` and `nbf`, in seconds. */
  @IsInt()
  @Min(0)
  @Max(300)
  OAUTH_CLOCK_TOLERANCE_SECONDS: number = 30;

  /**
   * A token naming a key id the issuer's cached JWKS lacks fetches the JWKS again,
   * at most once per this many milliseconds per issuer (a key rotation is picked
   * up; a flood of made-up key ids is not a flood of fetches).
   */
  @IsInt()
  @Min(0)
  OAUTH_JWKS_REFETCH_MS: number = 30_000;

  /**
   * A claim of the token (e.g. `groups`, `roles`, `scope`) whose values choose the
   * tools an OAuth caller may see and call (OAUTH_TOOLS_BY_CLAIM). Empty: every
   * tool. With several issuers: per issuer in OAUTH_POLICY instead.
   */
  @Matches(/^[A-Za-z0-9_:.\/-]*$/, { message: 'OAUTH_TOOLS_CLAIM must be a claim name' })
  OAUTH_TOOLS_CLAIM: string = '';

  /**
   * With OAUTH_TOOLS_CLAIM: `value=tool,tool;value=*` — a caller whose claim holds
   * `value` may use those tools (`*`: all); the tools of all its values add up,
   * and a caller with none of the values sees no tools. A hidden tool answers as
   * an unknown one.
   */
  @ValidateIf((env: OAuthSettings) => env.OAUTH_TOOLS_CLAIM !== '' || env.OAUTH_TOOLS_BY_CLAIM !== '')
  @ToolsByClaim()
  OAUTH_TOOLS_BY_CLAIM: string = '';

  /**
   * Opaque (non-JWT) access tokens: the issuer, one of OAUTH_ISSUERS, whose
   * introspection endpoint (RFC 7662, from its metadata) the gateway asks about
   * them; answers are kept by the token's hash, an active one up to
   * OAUTH_INTROSPECTION_CACHE_SECONDS. Empty: only JWT access tokens are taken.
   */
  @ValidateIf((env: OAuthSettings) => env.OAUTH_INTROSPECTION_ISSUER !== '')
  @OneOfIssuers()
  OAUTH_INTROSPECTION_ISSUER: string = '';

  /** The gateway's client id at the introspection issuer (a confidential client). */
  @ValidateIf((env: OAuthSettings) => env.OAUTH_INTROSPECTION_ISSUER !== '')
  @MinLength(1, { message: 'OAUTH_INTROSPECTION_CLIENT_ID must be set with OAUTH_INTROSPECTION_ISSUER' })
  OAUTH_INTROSPECTION_CLIENT_ID: string = '';

  /** Its client secret (HTTP Basic to the introspection endpoint). Never logged. */
  @ValidateIf((env: OAuthSettings) => env.OAUTH_INTROSPECTION_ISSUER !== '')
  @IsString()
  @MinLength(1, { message: 'OAUTH_INTROSPECTION_CLIENT_SECRET must be set with OAUTH_INTROSPECTION_ISSUER' })
  @NoPlaceholderInProduction()
  OAUTH_INTROSPECTION_CLIENT_SECRET: string = '';

  /** How long an active introspection answer is kept: a revocation at the issuer is heard within it. */
  @IsInt()
  @Min(1)
  @Max(3600)
  OAUTH_INTROSPECTION_CACHE_SECONDS: number = 60;

  /**
   * Opaque tokens never seen active that one client address (IPv6: its /64) may
   * have introspected per minute; a token found active is not counted. Over it:
   * 429, and the issuer is not asked.
   */
  @IsInt()
  @Min(1)
  OAUTH_INTROSPECTION_PER_SOURCE_PER_MINUTE: number = 30;
}
