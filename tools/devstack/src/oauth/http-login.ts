import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/** The cookies of one origin, sent back on the paths they were set for (enough for one login). */
class CookieJar {
  private readonly cookies = new Map<string, { value: string; path: string }>();

  store(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((part) => part.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      let path = '/';
      let expired = value === '';
      for (const attribute of attributes) {
        const [key, ...rest] = attribute.split('=');
        const attrValue = rest.join('=');
        if (/^path$/i.test(key)) path = attrValue || '/';
        if (/^max-age$/i.test(key) && Number(attrValue) <= 0) expired = true;
        if (/^expires$/i.test(key) && Date.parse(attrValue) <= Date.now()) expired = true;
      }
      const key = `${name};${path}`;
      if (expired) this.cookies.delete(key);
      else this.cookies.set(key, { value, path });
    }
  }

  header(url: URL): string {
    return [...this.cookies]
      .filter(
        ([, { path }]) =>
          url.pathname === path || url.pathname.startsWith(path.endsWith('/') ? path : `${path}/`) || path === '/',
      )
      .map(([key, { value }]) => `${key.slice(0, key.indexOf(';'))}=${value}`)
      .join('; ');
  }
}

export interface DriveOptions {
  /** Who logs in at the authorization server's login prompt. */
  user: string;
  /** The client's redirect URI: the flow ends at the first redirect there (nothing needs to listen). */
  redirectUrl: string;
  /** `false`: deny at the consent prompt (the redirect then carries `error=access_denied`). */
  consent?: boolean;
}

export interface AuthorizationResponse {
  code?: string;
  state?: string;
  error?: string;
  errorDescription?: string;
}

/**
 * What a user's browser does on the test authorization server (authorization-server.ts),
 * over plain HTTP with a cookie jar and redirects followed by hand: opens the
 * authorization URL, logs in as `user`, consents (or not), and stops at the
 * redirect to `redirectUrl`, whose query it returns.
 */
export async function driveAuthorization(authorizationUrl: URL, options: DriveOptions): Promise<AuthorizationResponse> {
  const jar = new CookieJar();
  const request = async (url: URL, init: RequestInit = {}) => {
    const cookie = jar.header(url);
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) },
    });
    jar.store(response);
    return response;
  };
  const where = (url: URL) => `${url.origin}${url.pathname}`;
  let next = new URL(authorizationUrl);
  for (let hop = 0; hop < 20; hop++) {
    if (next.href.startsWith(options.redirectUrl)) {
      const query = next.searchParams;
      return {
        code: query.get('code') ?? undefined,
        state: query.get('state') ?? undefined,
        error: query.get('error') ?? undefined,
        errorDescription: query.get('error_description') ?? undefined,
      };
    }
    let response = await request(next);
    if (response.status === 200 && next.pathname.startsWith('/interaction/')) {
      const page = (await response.json()) as { prompt: string; action: string };
      const form = new URLSearchParams();
      let action = new URL(page.action, next);
      if (page.prompt === 'login') form.set('login', options.user);
      else if (options.consent === false) action = new URL(page.action.replace(/\/confirm$/, '/abort'), next);
      response = await request(action, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
      });
      next = action;
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      next = new URL(location, next);
      continue;
    }
    const text = await response.text();
    throw new Error(`the authorization flow stopped at ${response.status} ${where(next)}: ${text.slice(0, 300)}`);
  }
  throw new Error('the authorization flow redirected more than 20 times');
}

export interface HttpLoginOptions {
  /** Who logs in (a user of the test authorization server). */
  user: string;
  /** Default a loopback URL nobody listens on: the flow stops at the redirect there. */
  redirectUrl?: string;
  clientName?: string;
  /** `false`: the user denies consent. */
  consent?: boolean;
}

/**
 * The official SDK's OAuthClientProvider for a test user: client registration,
 * tokens and the PKCE verifier kept in memory, and `redirectToAuthorization`
 * playing the user's browser over HTTP (`driveAuthorization`). After the SDK
 * throws UnauthorizedError, pass `authorizationCode` to `transport.finishAuth`
 * and connect again, as an application does after its redirect comes back.
 */
export class HttpLoginProvider implements OAuthClientProvider {
  /** The code of the last completed login (until taken). */
  authorizationCode?: string;
  /** How many times the SDK sent the user to the authorization server. */
  authorizations = 0;
  /** How many token responses the SDK saved (the first login, then each refresh). */
  tokenSaves = 0;
  private client?: OAuthClientInformationMixed;
  private saved?: OAuthTokens;
  private verifier?: string;
  private readonly redirect: string;

  constructor(private readonly options: HttpLoginOptions) {
    this.redirect = options.redirectUrl ?? 'http://127.0.0.1:9/oauth/callback';
  }

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.options.clientName ?? `mcpgw tests (${this.options.user})`,
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }

  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.client = information;
  }

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
    this.tokenSaves++;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error('no PKCE code verifier saved');
    return this.verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    this.authorizations++;
    const answer = await driveAuthorization(authorizationUrl, {
      user: this.options.user,
      redirectUrl: this.redirect,
      consent: this.options.consent,
    });
    if (answer.error) throw new Error(`authorization refused: ${answer.error}: ${answer.errorDescription ?? ''}`);
    if (!answer.code) throw new Error('the authorization response carries no code');
    this.authorizationCode = answer.code;
  }

  /** The code of the last login, once. */
  takeAuthorizationCode(): string {
    const code = this.authorizationCode;
    if (!code) throw new Error('no authorization code: the SDK has not sent the user to log in');
    this.authorizationCode = undefined;
    return code;
  }
}
