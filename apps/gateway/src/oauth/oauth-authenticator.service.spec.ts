import { exportJWK, generateKeyPair, SignJWT, type JWK, type KeyLike } from 'jose';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayEnv } from '../config/gateway.env';
import { metadataUrls } from './issuer-keys';
import { parseIssuers } from './issuer-urls';
import { OAuthAuthenticator } from './oauth-authenticator.service';

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

/** An issuer of its own: RFC 8414 metadata and a JWKS it serves (the keys it publishes can change). */
async function startIssuer() {
  const state = { published: [] as Key[], jwksFetches: 0 };
  const server: Server = createServer((req, res) => {
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (req.url === '/.well-known/oauth-authorization-server') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
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
    const result = await oauth.authenticate(await token(), AGENT);
    expect(result).toMatchObject({
      ok: true,
      principal: { kind: 'oauth', issuer: issuer.url, subject: 'alice', scopes: ['openid', 'mcp:tools'] },
    });
    const again = await oauth.authenticate(await token({ client_id: 'another-client' }), AGENT);
    // The same user through another client is the same caller; another user is not.
    expect(again.ok && again.principal.callerId).toBe(result.ok && result.principal.callerId);
    expect(result.ok && result.principal.callerId).toMatch(/^oauth:[A-Za-z0-9_-]{22}$/);
  });

  it('refuses a token for another resource (another agent, another service): 401 invalid_token', async () => {
    for (const aud of [`${BASE}/other-agent/mcp`, 'https://api.example.com']) {
      expect(await oauth.authenticate(await token({}, { aud }), AGENT)).toMatchObject({
        ok: false,
        status: 401,
        error: 'invalid_token',
        reason: 'the access token is for another resource',
      });
    }
    // The token of this agent's resource does not open another agent's endpoint either.
    expect(await oauth.authenticate(await token(), 'other-agent')).toMatchObject({ ok: false, status: 401 });
  });

  it('refuses another issuer, even one whose keys verify the signature', async () => {
    expect(await oauth.authenticate(await token({}, { iss: other.url }), AGENT)).toMatchObject({
      ok: false,
      status: 401,
      reason: 'the access token is not from a trusted issuer',
    });
  });

  it('refuses an expired token (past the clock tolerance)', async () => {
    const exp = Math.floor(Date.now() / 1000) - 60;
    expect(await oauth.authenticate(await token({}, { exp }), AGENT)).toMatchObject({
      ok: false,
      status: 401,
      reason: 'the access token expired',
    });
  });

  it('refuses a token signed with a key the issuer does not publish', async () => {
    const stranger = await newKey('k-unpublished');
    expect(await oauth.authenticate(await token({}, { signer: stranger }), AGENT)).toMatchObject({
      ok: false,
      status: 401,
    });
    // The same key id as a published key, another key: the signature does not verify.
    const impostor = await newKey('k1');
    expect(await oauth.authenticate(await token({}, { signer: impostor }), AGENT)).toMatchObject({
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
    expect(await oauth.authenticate(unsigned, AGENT)).toMatchObject({ ok: false, status: 401 });
    const { privateKey } = await generateKeyPair('PS256');
    const ps = await new SignJWT({ scope: 'mcp:tools' })
      .setProtectedHeader({ alg: 'PS256', kid: 'k1' })
      .setIssuer(issuer.url)
      .setSubject('alice')
      .setAudience(RESOURCE)
      .setExpirationTime(now + 300)
      .sign(privateKey);
    expect(await oauth.authenticate(ps, AGENT)).toMatchObject({
      ok: false,
      status: 401,
      reason: "the access token's algorithm is not accepted",
    });
  });

  it('answers a token without the scope 403 insufficient_scope, and says which scope to ask for', async () => {
    const result = await oauth.authenticate(await token({ scope: 'openid' }), AGENT);
    expect(result).toMatchObject({ ok: false, status: 403, error: 'insufficient_scope' });
    expect(oauth.challenge(AGENT, result as { error: string; reason: string })).toBe(
      `Bearer error="insufficient_scope", error_description="the access token lacks mcp:tools", scope="mcp:tools", resource_metadata="${BASE}/.well-known/oauth-protected-resource/${AGENT}/mcp"`,
    );
    // `scp` as a list (Entra, Okta) counts too.
    expect(await oauth.authenticate(await token({ scope: undefined, scp: ['mcp:tools'] }), AGENT)).toMatchObject({
      ok: true,
    });
  });

  it('picks up a key rotation at the issuer: a new key id fetches the keys again', async () => {
    const rotated = await newKey('k2');
    issuer.state.published = [rotated];
    const before = issuer.state.jwksFetches;
    expect(await oauth.authenticate(await token({}, { signer: rotated }), AGENT)).toMatchObject({ ok: true });
    expect(issuer.state.jwksFetches).toBe(before + 1);
    issuer.state.published = [key, rotated];
  });

  it('refuses what is not a JWT', async () => {
    expect(await oauth.authenticate('opaque-token-value', AGENT)).toMatchObject({
      ok: false,
      status: 401,
      reason: 'the access token is not a JWT',
    });
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
