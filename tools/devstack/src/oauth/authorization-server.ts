import { SignJWT } from 'jose';
import { generateKeyPair, createPrivateKey, randomBytes, randomUUID, type JsonWebKey } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import type { Provider as ProviderType } from 'oidc-provider';
import { freePort } from '../ports';

export interface AuthorizationServerOptions {
  /** The users who can log in (by name; the name is the token's `sub`). Default `alice`, `bob`. */
  users?: string[];
  /** The scopes every resource offers (beside `openid` and `offline_access`). Default `mcp:tools`. */
  resourceScopes?: string[];
  /** Access token lifetime in seconds (default 300); `accessTokenTtlSeconds` changes it later. */
  accessTokenTtlSeconds?: number;
  /**
   * Where it serves its metadata: at both RFC 8414's `/.well-known/oauth-authorization-server`
   * and OpenID's `/.well-known/openid-configuration` (`both`, oidc-provider's default), or at
   * only one of them (`openid`: like Auth0 or Entra ID, a client must fall back to OpenID discovery).
   */
  discovery?: 'both' | 'openid' | 'oauth';
  /** Which resource indicators (RFC 8707) it issues tokens for. Default: any http(s) URL. */
  acceptsResource?: (resource: string) => boolean;
  /**
   * Resources whose access tokens are opaque (read by the resource server through
   * introspection, RFC 7662, which the server offers to its confidential clients).
   * Default: none, every token a JWT.
   */
  opaqueFor?: (resource: string) => boolean;
}

export interface IssuedToken {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope?: string;
}

export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
}

/** What `mintToken` signs: an access token like the server's own, with anything changed. */
export interface MintOptions {
  sub?: string;
  aud?: string | string[];
  /** Space-separated, as oidc-provider writes it; `null` leaves the claim out. */
  scope?: string | null;
  iss?: string;
  client_id?: string;
  /** Seconds from now (negative: already expired). Default the server's access token lifetime. */
  expiresIn?: number;
  /** Seconds from now for `nbf` (absent by default, as in the server's tokens). */
  notBefore?: number;
  /** Which key signs: the one the server signs with now (default), one it never published, or none at all (`alg: none`). */
  key?: 'current' | 'unpublished' | 'none';
  /** More claims (e.g. `groups`), beside the ones above. */
  claims?: Record<string, unknown>;
}

export interface AuthorizationServer {
  /** The issuer URL (`http://127.0.0.1:<port>`), as the tokens' `iss`. */
  readonly issuer: string;
  /** The `kid` the server signs access tokens with now. */
  readonly currentKid: string;
  /** The lifetime of the access tokens it issues from now on (seconds). */
  accessTokenTtlSeconds: number;
  /** The public keys it publishes at its JWKS URI. */
  publishedKids(): string[];
  /** Every token its introspection endpoint (RFC 7662) was asked about, in order, whatever the answer. */
  readonly introspected: readonly string[];
  /**
   * A new signing key with a new `kid` becomes the one used; the old ones stay
   * published (`keepOld`, default) or are dropped. The server keeps its clients,
   * grants and tokens: only the keys change.
   */
  rotateKeys(options?: { keepOld?: boolean }): Promise<string>;
  /** A confidential client registered through the registration endpoint (RFC 7591), for `client_credentials`. */
  registerMachineClient(scope?: string): Promise<RegisteredClient>;
  /** A `client_credentials` token for `resource` (RFC 8707), from a machine client registered once per server. */
  clientCredentialsToken(resource: string, scope?: string): Promise<IssuedToken>;
  /** A token the server did not issue but that looks like its own, for negative tests. */
  mintToken(options?: MintOptions): Promise<string>;
  stop(): Promise<void>;
}

const SIGNING_ALG = 'RS256';
const OAUTH_METADATA = '/.well-known/oauth-authorization-server';
const OPENID_METADATA = '/.well-known/openid-configuration';

type PrivateJwk = JsonWebKey & { kid: string; alg: string; use: string };

async function newSigningKey(): Promise<PrivateJwk> {
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });
  return { ...jwk, kid: `k-${randomBytes(6).toString('base64url')}`, alg: SIGNING_ALG, use: 'sig' };
}

type Stored = { payload: Record<string, unknown>; expiresAt?: number };

/**
 * oidc-provider's storage in a Map that outlives one Provider instance, so that
 * a key rotation (a new instance with other keys) keeps clients, sessions and grants.
 */
function memoryAdapter(store: Map<string, Stored>) {
  const live = (key: string): Record<string, unknown> | undefined => {
    const entry = store.get(key);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      store.delete(key);
      return undefined;
    }
    return entry?.payload;
  };
  return class MemoryAdapter {
    constructor(private readonly model: string) {}
    private key(id: string) {
      return `${this.model}:${id}`;
    }
    async upsert(id: string, payload: Record<string, unknown>, expiresIn?: number) {
      const expiresAt = expiresIn ? Date.now() + expiresIn * 1_000 : undefined;
      store.set(this.key(id), { payload, expiresAt });
      if (this.model === 'Session') store.set(`SessionUid:${String(payload.uid)}`, { payload: { id }, expiresAt });
    }
    async find(id: string) {
      return live(this.key(id));
    }
    async findByUid(uid: string) {
      const id = live(`SessionUid:${uid}`)?.id;
      return typeof id === 'string' ? live(`Session:${id}`) : undefined;
    }
    async findByUserCode(_userCode: string) {
      return undefined;
    }
    async consume(id: string) {
      const payload = live(this.key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1_000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [key, { payload }] of store) if (payload.grantId === grantId) store.delete(key);
    }
  };
}

interface KoaLikeContext {
  type: string;
  body: unknown;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/**
 * A real OAuth 2.1 / OpenID authorization server (panva's oidc-provider) on
 * 127.0.0.1, for the resource-server tests: authorization code with PKCE (S256,
 * required), refresh tokens, open dynamic client registration (RFC 7591),
 * `client_credentials`, resource indicators (RFC 8707) issuing JWT access tokens
 * (RFC 9068, `typ: at+jwt`) whose `aud` is the requested resource.
 *
 * Login and consent are plain HTTP (no browser): the authorization endpoint
 * redirects to `/interaction/{uid}`, whose GET answers JSON
 * `{ uid, prompt: 'login' | 'consent', action }`; POST `action` with
 * `login=<user>` logs in, with nothing consents to what the client asked;
 * `/interaction/{uid}/abort` denies. `driveAuthorization` in http-login.ts does all that.
 */
export async function startAuthorizationServer(options: AuthorizationServerOptions = {}): Promise<AuthorizationServer> {
  const { Provider, errors } = await import('oidc-provider');
  const users = options.users ?? ['alice', 'bob'];
  const resourceScopes = options.resourceScopes ?? ['mcp:tools'];
  const acceptsResource = options.acceptsResource ?? ((resource: string) => /^https?:\/\//.test(resource));
  const opaqueFor = options.opaqueFor ?? (() => false);
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const store = new Map<string, Stored>();
  const Adapter = memoryAdapter(store);
  const cookieKeys = [randomBytes(32).toString('base64url')];
  let keys: PrivateJwk[] = [await newSigningKey()];
  const unpublishedKey = await newSigningKey();
  let ttl = options.accessTokenTtlSeconds ?? 300;

  const configuration = () => ({
    adapter: Adapter,
    jwks: { keys: [...keys] },
    cookies: { keys: cookieKeys },
    scopes: ['openid', 'offline_access', ...resourceScopes],
    claims: { openid: ['sub'] },
    findAccount: (_ctx: unknown, id: string) =>
      users.includes(id) ? { accountId: id, claims: () => ({ sub: id }) } : undefined,
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      // Resource servers introspect as confidential clients; public clients (the MCP apps) may not.
      introspection: {
        enabled: true,
        allowedPolicy: (_ctx: unknown, client: { clientAuthMethod: string }) => client.clientAuthMethod !== 'none',
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: unknown, _client: unknown, oneOf?: string | string[]) => oneOf,
        // The refresh and code exchanges get a token for the resource granted at authorization.
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => {
          if (!acceptsResource(resource)) throw new errors.InvalidTarget();
          return {
            scope: resourceScopes.join(' '),
            audience: resource,
            accessTokenTTL: ttl,
            ...(opaqueFor(resource)
              ? { accessTokenFormat: 'opaque' }
              : { accessTokenFormat: 'jwt', jwt: { sign: { alg: SIGNING_ALG, kid: keys[0].kid } } }),
          };
        },
      },
    },
    ttl: {
      AccessToken: () => ttl,
      ClientCredentials: () => ttl,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 3_600,
      Grant: 3_600,
      RefreshToken: 3_600,
      IdToken: 3_600,
    },
    // MCP clients ask for the resource's scopes, not offline_access: every client that may refresh gets a refresh token.
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    expiresWithSession: () => false,
    clientBasedCORS: () => true,
    renderError: (ctx: KoaLikeContext, out: Record<string, unknown>) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  });

  const introspected: string[] = [];
  let provider!: ProviderType;
  let handle!: (req: IncomingMessage, res: ServerResponse) => void;
  const build = () => {
    provider = new Provider(issuer, configuration());
    provider.use(async (ctx, next) => {
      await next();
      const token = ctx.oidc?.route === 'introspection' ? ctx.oidc.params?.token : undefined;
      if (typeof token === 'string') introspected.push(token);
    });
    handle = provider.callback();
  };
  build();

  const interaction = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const [, , uid, action] = path.split('/');
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) return sendJson(res, 400, { error: 'interaction_mismatch' });
    const prompt = details.prompt.name;
    if (req.method === 'GET' && action === undefined) {
      return sendJson(res, 200, {
        uid,
        prompt,
        client_id: details.params.client_id,
        scope: details.params.scope,
        action: `/interaction/${uid}/${prompt === 'login' ? 'login' : 'confirm'}`,
      });
    }
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'method_not_allowed' });
    const form = await readForm(req);
    if (action === 'abort') {
      return provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'the user said no' },
        { mergeWithLastSubmission: false },
      );
    }
    if (action === 'login' && prompt === 'login') {
      const login = form.get('login') ?? '';
      if (!users.includes(login)) return sendJson(res, 400, { error: 'unknown_user', users });
      return provider.interactionFinished(
        req,
        res,
        { login: { accountId: login } },
        { mergeWithLastSubmission: false },
      );
    }
    if (action === 'confirm' && prompt === 'consent') {
      const accountId = details.session?.accountId;
      const clientId = String(details.params.client_id);
      if (!accountId) return sendJson(res, 400, { error: 'not_logged_in' });
      const grant =
        (details.grantId && (await provider.Grant.find(details.grantId))) ||
        new provider.Grant({ accountId, clientId });
      const missing = details.prompt.details as {
        missingOIDCScope?: string[];
        missingOIDCClaims?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
        grant.addResourceScope(resource, scopes.join(' '));
      }
      const grantId = await grant.save();
      return provider.interactionFinished(
        req,
        res,
        { consent: details.grantId ? {} : { grantId } },
        { mergeWithLastSubmission: true },
      );
    }
    return sendJson(res, 400, { error: 'wrong_prompt', prompt });
  };

  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    if (path.startsWith('/interaction/')) {
      interaction(req, res, path).catch((error: Error) => {
        if (!res.headersSent) sendJson(res, 400, { error: 'interaction_failed', error_description: error.message });
      });
      return;
    }
    const hidden = { both: undefined, openid: OAUTH_METADATA, oauth: OPENID_METADATA }[options.discovery ?? 'both'];
    if (path === hidden) return sendJson(res, 404, { error: 'not_found' });
    handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });

  const metadataPath = options.discovery === 'oauth' ? OAUTH_METADATA : OPENID_METADATA;
  const metadata = async () => (await (await fetch(`${issuer}${metadataPath}`)).json()) as Record<string, string>;

  const registerMachineClient = async (scope = resourceScopes.join(' ')): Promise<RegisteredClient> => {
    const response = await fetch((await metadata()).registration_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'machine',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
        scope,
      }),
    });
    const body = (await response.json()) as RegisteredClient & { error?: string; error_description?: string };
    if (!response.ok) throw new Error(`registration refused: ${body.error}: ${body.error_description}`);
    return { client_id: body.client_id, client_secret: body.client_secret };
  };

  let machine: Promise<RegisteredClient> | undefined;
  const clientCredentialsToken = async (resource: string, scope = resourceScopes.join(' ')): Promise<IssuedToken> => {
    machine ??= registerMachineClient();
    const client = await machine;
    const basic = Buffer.from(
      `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret ?? '')}`,
    ).toString('base64');
    const form = new URLSearchParams({ grant_type: 'client_credentials', resource });
    if (scope) form.set('scope', scope);
    const response = await fetch((await metadata()).token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
      body: form,
    });
    const body = (await response.json()) as IssuedToken & { error?: string; error_description?: string };
    if (!response.ok) throw new Error(`token refused: ${body.error}: ${body.error_description}`);
    return body;
  };

  const mintToken = async (mint: MintOptions = {}): Promise<string> => {
    const now = Math.floor(Date.now() / 1_000);
    const payload: Record<string, unknown> = {
      jti: randomUUID(),
      sub: mint.sub ?? users[0],
      iat: now,
      exp: now + (mint.expiresIn ?? ttl),
      client_id: mint.client_id ?? 'minted',
      iss: mint.iss ?? issuer,
      aud: mint.aud,
      ...mint.claims,
    };
    if (mint.scope !== null) payload.scope = mint.scope ?? resourceScopes.join(' ');
    if (mint.notBefore !== undefined) payload.nbf = now + mint.notBefore;
    if (mint.key === 'none') {
      const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      return `${part({ alg: 'none', typ: 'at+jwt' })}.${part(payload)}.`;
    }
    const jwk = mint.key === 'unpublished' ? unpublishedKey : keys[0];
    return new SignJWT(payload)
      .setProtectedHeader({ alg: SIGNING_ALG, typ: 'at+jwt', kid: jwk.kid })
      .sign(createPrivateKey({ key: jwk, format: 'jwk' }));
  };

  return {
    issuer,
    get currentKid() {
      return keys[0].kid;
    },
    get accessTokenTtlSeconds() {
      return ttl;
    },
    set accessTokenTtlSeconds(seconds: number) {
      ttl = seconds;
    },
    publishedKids: () => keys.map((k) => k.kid),
    introspected,
    rotateKeys: async ({ keepOld = true } = {}) => {
      const next = await newSigningKey();
      keys = keepOld ? [next, ...keys] : [next];
      build();
      return next.kid;
    },
    registerMachineClient,
    clientCredentialsToken,
    mintToken,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
