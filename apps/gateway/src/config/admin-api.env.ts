import { IsString, Matches } from 'class-validator';
import { unsafeUrl } from '../oauth/issuer-urls';

/** The management API (apps/gateway/src/admin-api/README.md). */
export class AdminApiSettings {
  /**
   * The management API's own port (docs/admin.md#admin-api), never the public
   * one. Empty: no management API (the default: a gateway serves it only when an
   * operator asks for it).
   */
  @Matches(/^([1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5]|0)?$/, {
    message: 'must be a port number 0-65535, or empty for no management API',
  })
  ADMIN_PORT: string = '';

  /** Its interface: loopback unless an operator opens it (behind TLS and a network policy). */
  @IsString()
  ADMIN_HOST: string = '127.0.0.1';
}

/** The port to serve the management API on, or undefined when it is off. */
export function adminPort(env: { ADMIN_PORT: string }): number | undefined {
  return env.ADMIN_PORT === '' ? undefined : Number(env.ADMIN_PORT);
}

/**
 * OIDC login to the console (admin-api/README.md, "OIDC login"): with an issuer,
 * the console offers "log in with single sign-on" beside the admin token.
 */
export class AdminOidcSettings {
  /**
   * The OpenID Provider's issuer URL (its /.well-known/openid-configuration is
   * read). Empty: no OIDC login, admin tokens and login links only.
   */
  @Matches(/^(https?:\/\/\S+)?$/, { message: 'must be the issuer URL (http(s)://…), or empty for no OIDC login' })
  ADMIN_OIDC_ISSUER: string = '';

  /** The console's client at that provider (a confidential client: authorization code with PKCE). */
  @IsString()
  ADMIN_OIDC_CLIENT_ID: string = '';

  /** A confidential client's secret (client_secret_basic). */
  @IsString()
  ADMIN_OIDC_CLIENT_SECRET: string = '';

  /** Where the provider sends the browser back; empty: http://ADMIN_HOST:ADMIN_PORT/admin/v1/session/oidc/callback. */
  @Matches(/^(https?:\/\/\S+)?$/, { message: 'must be an http(s) URL ending in /admin/v1/session/oidc/callback' })
  ADMIN_OIDC_REDIRECT_URL: string = '';

  /** Comma-separated `sub` values allowed in (this or ADMIN_OIDC_ALLOWED_EMAILS is required with an issuer). */
  @IsString()
  ADMIN_OIDC_ALLOWED_SUBJECTS: string = '';

  /** Comma-separated e-mail addresses allowed in (the ID token's `email`, with `email_verified` true). */
  @IsString()
  ADMIN_OIDC_ALLOWED_EMAILS: string = '';
}

export interface AdminOidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUrl: string;
  subjects: Set<string>;
  emails: Set<string>;
}

/** The OIDC login's settings when an issuer is set (undefined: off); an issuer without a client or an allow list is refused. */
export function adminOidc(env: AdminOidcSettings & AdminApiSettings): AdminOidcConfig | undefined {
  if (!env.ADMIN_OIDC_ISSUER) return undefined;
  const unsafe = unsafeUrl(env.ADMIN_OIDC_ISSUER);
  if (unsafe) throw new Error(`ADMIN_OIDC_ISSUER: ${env.ADMIN_OIDC_ISSUER}: ${unsafe}`);
  const list = (value: string) =>
    new Set(
      value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    );
  const subjects = list(env.ADMIN_OIDC_ALLOWED_SUBJECTS);
  const emails = new Set([...list(env.ADMIN_OIDC_ALLOWED_EMAILS)].map((email) => email.toLowerCase()));
  if (!env.ADMIN_OIDC_CLIENT_ID || !env.ADMIN_OIDC_CLIENT_SECRET) {
    throw new Error('ADMIN_OIDC_ISSUER needs ADMIN_OIDC_CLIENT_ID and ADMIN_OIDC_CLIENT_SECRET');
  }
  if (subjects.size === 0 && emails.size === 0) {
    throw new Error(
      'ADMIN_OIDC_ISSUER needs ADMIN_OIDC_ALLOWED_SUBJECTS or ADMIN_OIDC_ALLOWED_EMAILS: who may log in is never "anyone the provider knows"',
    );
  }
  return {
    issuer: env.ADMIN_OIDC_ISSUER.replace(/\/$/, ''),
    clientId: env.ADMIN_OIDC_CLIENT_ID,
    clientSecret: env.ADMIN_OIDC_CLIENT_SECRET,
    redirectUrl:
      env.ADMIN_OIDC_REDIRECT_URL || `http://${env.ADMIN_HOST}:${env.ADMIN_PORT}/admin/v1/session/oidc/callback`,
    subjects,
    emails,
  };
}
