import {
  API_KEY_PREFIX,
  PAT_PREFIX,
  ADMIN_TOKEN_PREFIX,
  ADMIN_SESSION_PREFIX,
  ADMIN_LOGIN_CODE_PREFIX,
} from '@mcpgw/contracts';
import { mintToken } from '@mcpgw/grants';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type KeyLike } from 'jose';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayEnv } from '../config/gateway.env';
import { ConversationHandles } from '../sessions/conversation-handles';
import { newSecret } from '../webhooks/webhook-secrets';
import { metadataUrls } from './issuer-keys';
import { parseIssuers } from './issuer-urls';
import { OAuthAuthenticator } from './oauth-authenticator.service';

const SOURCE = '203.0.113.7';

const BASE = 'https://mcp.example.com';
const AGENT = 'demo-agent';
const RESOURCE = `${BASE}/${AGENT}/mcp`;

interface Key {
  kid: string;
  privateKey: KeyLike;
  jwk: JWK;
}

async function newKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

/**
 * An issuer of its own: RFC 8414 metadata, a JWKS it serves (the keys it
 * publishes can change) and an introspection endpoint that answers from
 * `active` and records every token it is asked about.
 */
async function startIssuer() {
  const state = {
    published: [] as Key[],
    jwksFetches: 0,
    active: new Map<string, Record<string, unknown>>(),
    introspected: [] as string[],
  };
  const server: Server = createServer((req, res) => {
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (req.url === '/.well-known/oauth-authorization-server') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks`, introspection_endpoint: `${issuer}/introspect` }));
    } else if (req.url === '/introspect') {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const token = new URLSearchParams(body).get('token') ?? '';
        state.introspected.push(token);
        const claims = state.active.get(token);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(claims ? { active: true, iss: issuer, ...claims } : { active: false }));
      });
    } else if (req.url === '/jwks') {
      state.jwksFetches++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: state.published.map((k) => k.jwk) }));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, state, server };
}

describe('OAuthAuthenticator: JWT access tokens of trusted issuers, for this agent, with the scopes', () => {
  let issuer: Awaited<ReturnType<typeof startIssuer>>;
  let other: Awaited<ReturnType<typeof startIssuer>>;
  let key: Key;
  let oauth: OAuthAuthenticator;

  beforeAll(async () => {
    [issuer, other] = await Promise.all([startIssuer(), startIssuer()]);
    key = await newKey('k1');
    issuer.state.published = [key];
    other.state.published = [key];
    oauth = new OAuthAuthenticator({
      OAUTH_ISSUERS: issuer.url,
      PUBLIC_BASE_URL: BASE,
      OAUTH_SCOPES: 'mcp:tools',
      OAUTH_ALGORITHMS: 'RS256,ES256',
      OAUTH_CLOCK_TOLERANCE_SECONDS: 5,
      OAUTH_JWKS_REFETCH_MS: 0,
    } as GatewayEnv);
  });

  afterAll(() => {
    issuer.server.close();
    other.server.close();
  });

  function token(
    claims: Record<string, unknown> = {},
    options: { signer?: Key; iss?: string; aud?: string; exp?: number } = {},
  ): Promise<string> {
    const signer = options.signer ?? key;
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ scope: 'openid mcp:tools', client_id: 'c1', ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: signer.kid, typ: 'at+jwt' })
      .setIssuer(options.iss ?? issuer.url)
      .setSubject('alice')
      .setAudience(options.aud ?? RESOURCE)
      .setIssuedAt(now)
      .setExpirationTime(options.exp ?? now + 300)
      .sign(signer.privateKey);
  }

  it("takes a token of the issuer for the agent's resource: the principal is issuer + subject", async () => {
    const result = await oauth.authenticate(await token(), AGENT, SOURCE);
    expect(result).toMatchObject({
      ok: true,
      principal: { kind: 'oauth', issuer: issuer.url, subject: 'alice', scopes: ['openid', 'mcp:tools'] },
    });
    const again = await oauth.authenticate(await token({ client_id: 'another-client' }), AGENT, SOURCE);
    // The same user through another client is the same caller; another user is not.
    expect(again.ok && again.principal.callerId).toBe(result.ok && result.principal.callerId);
    expect(result.ok && result.principal.callerId).toMatch(/^oauth:[A-Za-z0-9_-]{22}$/);
  });

  it('refuses a token for another resource (another agent, another service): 401 invalid_token', async () => {
    for (const aud of [`${BASE}/other-agent/mcp`, 'https://api.example.com']) {
      expect(await oauth.authenticate(await token({}, { aud }), AGENT, SOURCE)).toMatchObject({
        ok: false,
        status: 401,
        error: 'invalid_token',
        reason: 'the access token is for another resource',
      });
    }
    // The token of this agent's resource does not open another agent's endpoint either.
    expect(await oauth.authenticate(await token(), 'other-agent', SOURCE)).toMatchObject({ ok: false, status: 401 });
  });

  it('refuses another issuer, even one whose keys verify the signature', async () => {
    expect(await oauth.authenticate(await token({}, { iss: other.url }), AGENT, SOURCE)).toMatchObject({
      ok: false,
      status: 401,
      reason: 'the access token is not from a trusted issuer',
    });
  });

  it('refuses an expired token (past the clock tolerance)', async () => {
    const exp = Math.floor(Date.now() / 1000) - 60;
    expect(await oauth.authenticate(await token({}, { exp }), AGENT, SOURCE)).toMatchObject({
      ok: false,
      status: 401,
      reason: 'the access token expired',
    });
  });

  it('refuses a token signed with a key the issuer does not publish', async () => {
    const stranger = await newKey('k-unpublished');
    expect(await oauth.authenticate(await token({}, { signer: stranger }), AGENT, SOURCE)).toMatchObject({
      ok: false,
      status: 401,
    });
    // The same key id as a published key, another key: the signature does not verify.
    const impostor = await newKey('k1');
    expect(await oauth.authenticate(await token({}, { signer: impostor }), AGENT, SOURCE)).toMatchObject({
      ok: false,
      status: 401,
    });
  });

  it('refuses alg none, and an algorithm not allowed', async () => {
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const unsigned = `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64({
      iss: issuer.url,
      sub: 'alice',
      aud: RESOURCE,
      exp: now + 300,
      scope: 'mcp:tools',
    })}.`;
    expect(await oauth.authenticate(unsigned, AGENT, SOURCE)).toMatchObject({ ok: false, status: 401 });
    const { privateKey } = await generateKeyPair('PS256');
    const ps = await new SignJWT({ scope: 'mcp:tools' })
      .setProtectedHeader({ alg: 'PS256', kid: 'k1' })
      .setIssuer(issuer.url)
      .setSubject('alice')
      .setAudience(RESOURCE)
      .setExpirationTime(now + 300)
      .sign(privateKey);
    expect(await oauth.authenticate(ps, AGENT, SOURCE)).toMatchObject({
      ok: false,
      status: 401,
      reason: "the access token's algorithm is not accepted",
    });
  });

  it('answers a token without the scope 403 insufficient_scope, and says which scope to ask for', async () => {
    const result = await oauth.authenticate(await token({ scope: 'openid' }), AGENT, SOURCE);
    expect(result).toMatchObject({ ok: false, status: 403, error: 'insufficient_scope' });
    expect(oauth.challenge(AGENT, result as { error: string; reason: string })).toBe(
      `Bearer error="insufficient_scope", error_description="the access token lacks mcp:tools", scope="mcp:tools", resource_metadata="${BASE}/.well-known/oauth-protected-resource/${AGENT}/mcp"`,
    );
    // `scp` as a list (Entra, Okta) counts too.
    expect(
      await oauth.authenticate(await token({ scope: undefined, scp: ['mcp:tools'] }), AGENT, SOURCE),
    ).toMatchObject({
      ok: true,
    });
  });

  it('picks up a key rotation at the issuer: a new key id fetches the keys again', async () => {
    const rotated = await newKey('k2');
    issuer.state.published = [rotated];
    const before = issuer.state.jwksFetches;
    expect(await oauth.authenticate(await token({}, { signer: rotated }), AGENT, SOURCE)).toMatchObject({ ok: true });
    expect(issuer.state.jwksFetches).toBe(before + 1);
    issuer.state.published = [key, rotated];
  });

  it('refuses what is not a JWT', async () => {
    expect(await oauth.authenticate('opaque-token-value', AGENT, SOURCE)).toMatchObject({
      ok: false,
      status: 401,
      reason: 'the access token is not a JWT',
    });
  });
});

describe('OAuthAuthenticator: opaque tokens, asked about at the introspection issuer', () => {
  let issuer: Awaited<ReturnType<typeof startIssuer>>;
  let oauth: OAuthAuthenticator;
  const now = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    issuer = await startIssuer();
    oauth = new OAuthAuthenticator({
      OAUTH_ISSUERS: issuer.url,
      PUBLIC_BASE_URL: BASE,
      OAUTH_SCOPES: 'mcp:tools',
      OAUTH_ALGORITHMS: 'RS256',
      OAUTH_CLOCK_TOLERANCE_SECONDS: 5,
      OAUTH_JWKS_REFETCH_MS: 0,
      OAUTH_INTROSPECTION_ISSUER: issuer.url,
      OAUTH_INTROSPECTION_CLIENT_ID: 'gateway',
      OAUTH_INTROSPECTION_CLIENT_SECRET: 'secret',
      OAUTH_INTROSPECTION_CACHE_SECONDS: 60,
      OAUTH_INTROSPECTION_PER_SOURCE_PER_MINUTE: 30,
    } as GatewayEnv);
  });

  afterAll(() => issuer.server.close());

  it("a machine client's token without sub is never the caller of a user whose sub is its client_id", async () => {
    const claims = { aud: RESOURCE, exp: now() + 300, scope: 'mcp:tools' };
    issuer.state.active.set('machine-token', { ...claims, client_id: 'c1' });
    issuer.state.active.set('user-token', { ...claims, sub: 'c1', client_id: 'another' });
    issuer.state.active.set('prefixed-user-token', { ...claims, sub: 'client:c1', client_id: 'another' });
    const machine = await oauth.authenticate('machine-token', AGENT, SOURCE);
    const user = await oauth.authenticate('user-token', AGENT, SOURCE);
    const prefixed = await oauth.authenticate('prefixed-user-token', AGENT, SOURCE);
    expect(machine).toMatchObject({ ok: true, principal: { subject: 'client:c1' } });
    expect(user).toMatchObject({ ok: true, principal: { subject: 'c1' } });
    expect(prefixed).toMatchObject({ ok: true, principal: { subject: 'client:c1' } });
    const ids = [machine, user, prefixed].map((r) => r.ok && r.principal.callerId);
    expect(new Set(ids).size).toBe(3);
  });

  it('refuses a sub with control characters (they would blur whose caller id is whose)', async () => {
    issuer.state.active.set('odd-sub', { aud: RESOURCE, exp: now() + 300, scope: 'mcp:tools', sub: 'client\nc1' });
    expect(await oauth.authenticate('odd-sub', AGENT, SOURCE)).toMatchObject({
      ok: false,
      status: 401,
      reason: "the access token's sub claim is not accepted",
    });
  });

  it("refuses the gateway's own secrets as they are: none reaches the introspection endpoint", async () => {
    const handles = new ConversationHandles({
      CONVERSATION_HANDLE_SECRET: 'x'.repeat(32),
      CONVERSATION_HANDLE_PREVIOUS_SECRETS: '',
      CONVERSATION_HANDLE_TTL_SECONDS: 3600,
    } as GatewayEnv);
    const secrets = [
      ...[API_KEY_PREFIX, PAT_PREFIX, ADMIN_TOKEN_PREFIX, ADMIN_SESSION_PREFIX, ADMIN_LOGIN_CODE_PREFIX].map(
        (prefix) => mintToken(prefix).token,
      ),
      newSecret(),
      handles.mint('channel-1', AGENT, 'apikey:k1'),
      `SU${'A'.repeat(56)}`,
    ];
    const before = issuer.state.introspected.length;
    for (const secret of secrets) {
      const result = await oauth.authenticate(secret, AGENT, SOURCE);
      expect(result, secret.slice(0, 6)).toMatchObject({ ok: false, status: 401, error: 'invalid_token' });
      expect(!result.ok && result.reason).toMatch(/of this gateway, not an access token/);
    }
    expect(issuer.state.introspected.slice(before)).toEqual([]);
    // A token of no known shape is asked about (the control: the endpoint is reachable and records).
    expect(await oauth.authenticate('made-up-opaque', AGENT, SOURCE)).toMatchObject({ ok: false, status: 401 });
    expect(issuer.state.introspected.slice(before)).toEqual(['made-up-opaque']);
  });
});

describe('OAuthAuthenticator: several issuers, each on the terms of its policy entry', () => {
  let corp: Awaited<ReturnType<typeof startIssuer>>;
  let partner: Awaited<ReturnType<typeof startIssuer>>;
  let key: Key;
  let oauth: OAuthAuthenticator;

  beforeAll(async () => {
    [corp, partner] = await Promise.all([startIssuer(), startIssuer()]);
    key = await newKey('k1');
    corp.state.published = [key];
    partner.state.published = [key];
    const tools = { tools_claim: 'groups', tools_by_claim: { admins: ['*'], support: ['echo'] } };
    oauth = new OAuthAuthenticator({
      OAUTH_ISSUERS: '',
      OAUTH_POLICY: JSON.stringify({
        issuers: [
          { issuer: corp.url, agents: '*', ...tools },
          {
            issuer: partner.url,
            agents: [AGENT],
            scopes: ['partner:mcp'],
            tools_claim: 'groups',
            tools_by_claim: { support: ['echo'] },
          },
        ],
      }),
      OAUTH_POLICY_FILE: '',
      OAUTH_TOOLS_CLAIM: '',
      OAUTH_TOOLS_BY_CLAIM: '',
      PUBLIC_BASE_URL: BASE,
      OAUTH_SCOPES: 'mcp:tools',
      OAUTH_ALGORITHMS: 'RS256',
      OAUTH_CLOCK_TOLERANCE_SECONDS: 5,
      OAUTH_JWKS_REFETCH_MS: 0,
    } as GatewayEnv);
  });

  afterAll(() => {
    corp.server.close();
    partner.server.close();
  });

  const token = (iss: string, claims: Record<string, unknown>, aud = RESOURCE) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .setIssuer(iss)
      .setSubject('alice')
      .setAudience(aud)
      .setExpirationTime(Math.floor(Date.now() / 1000) + 300)
      .sign(key.privateKey);

  it("maps a claim by its issuer's entry: the partner's admins are not the corporate admins", async () => {
    const corpAdmin = await oauth.authenticate(
      await token(corp.url, { scope: 'mcp:tools', groups: ['admins'] }),
      AGENT,
      SOURCE,
    );
    expect(corpAdmin).toMatchObject({ ok: true });
    expect(corpAdmin.ok && corpAdmin.principal.tools).toBeUndefined(); // every tool
    const partnerAdmin = await oauth.authenticate(
      await token(partner.url, { scope: 'partner:mcp', groups: ['admins', 'support'] }),
      AGENT,
      SOURCE,
    );
    expect(partnerAdmin).toMatchObject({ ok: true, principal: { issuer: partner.url, tools: ['echo'] } });
  });

  it("holds each issuer's tokens to its own scopes, and names them in the challenge", async () => {
    const result = await oauth.authenticate(await token(partner.url, { scope: 'mcp:tools' }), AGENT, SOURCE);
    expect(result).toMatchObject({ ok: false, status: 403, scopes: ['partner:mcp'] });
    expect(oauth.challenge(AGENT, result as { error: string; reason: string })).toContain('scope="partner:mcp"');
    // The issuers of this agent want different scopes: a challenge without a token names none.
    expect(oauth.challenge(AGENT)).not.toContain('scope=');
    expect(oauth.challenge('hr-agent')).toContain('scope="mcp:tools"');
  });

  it('refuses an issuer on an agent its entry does not list, as an untrusted one', async () => {
    const aud = `${BASE}/hr-agent/mcp`;
    expect(
      await oauth.authenticate(await token(partner.url, { scope: 'partner:mcp' }, aud), 'hr-agent', SOURCE),
    ).toMatchObject({
      ok: false,
      status: 401,
      error: 'invalid_token',
      reason: 'the access token is not from a trusted issuer',
    });
    expect(
      await oauth.authenticate(await token(corp.url, { scope: 'mcp:tools' }, aud), 'hr-agent', SOURCE),
    ).toMatchObject({ ok: true });
    expect(oauth.issuersOf('hr-agent')).toEqual([corp.url]);
    expect(oauth.issuersOf(AGENT)).toEqual([corp.url, partner.url]);
  });
});

describe('issuer URLs', () => {
  it('takes https, and http only on loopback', () => {
    expect(parseIssuers('https://a.example.com, http://127.0.0.1:9000/realms/x')).toEqual([
      'https://a.example.com',
      'http://127.0.0.1:9000/realms/x',
    ]);
    expect(() => parseIssuers('http://as.example.com')).toThrow(/https/);
    expect(() => parseIssuers('https://as.example.com/?tenant=1')).toThrow(/query/);
  });

  it('finds metadata as RFC 8414 and OpenID say, for issuers with and without a path', () => {
    expect(metadataUrls('https://as.example.com')).toEqual([
      'https://as.example.com/.well-known/oauth-authorization-server',
      'https://as.example.com/.well-known/openid-configuration',
    ]);
    expect(metadataUrls('https://kc.example.com/realms/mcp')).toEqual([
      'https://kc.example.com/.well-known/oauth-authorization-server/realms/mcp',
      'https://kc.example.com/.well-known/openid-configuration/realms/mcp',
      'https://kc.example.com/realms/mcp/.well-known/openid-configuration',
    ]);
  });
});
