import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { freePort } from '../ports';
import { startAuthorizationServer, type AuthorizationServer } from './authorization-server';
import { driveAuthorization, HttpLoginProvider } from './http-login';

/**
 * The test authorization server and the SDK's login driver on their own, with a
 * small resource server (the SDK's own MCP server behind a bearer check with
 * jose) standing in for the gateway: the OAuth e2e spec then only has the
 * gateway to debug.
 */
describe('test authorization server (oidc-provider) with the SDK OAuth client', () => {
  let as: AuthorizationServer;
  let rs: Server;
  let base: string;
  const resource = () => `${base}/agent/mcp`;
  const metadataUrl = () => `${base}/.well-known/oauth-protected-resource/agent/mcp`;
  const seen: { sub?: string; scope?: string }[] = [];

  beforeAll(async () => {
    // OpenID discovery only, as at Auth0 or Entra ID: the SDK has to fall back to it.
    as = await startAuthorizationServer({ accessTokenTtlSeconds: 60, discovery: 'openid' });
    const jwks = createRemoteJWKSet(new URL(`${as.issuer}/jwks`), { cooldownDuration: 0 });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    rs = createServer(async (req, res) => {
      const path = new URL(req.url ?? '/', base).pathname;
      if (path === '/.well-known/oauth-protected-resource/agent/mcp') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            resource: resource(),
            authorization_servers: [as.issuer],
            scopes_supported: ['mcp:tools'],
            bearer_methods_supported: ['header'],
          }),
        );
        return;
      }
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const challenge = `Bearer resource_metadata="${metadataUrl()}", scope="mcp:tools"`;
      if (!token) {
        res.writeHead(401, { 'www-authenticate': challenge }).end();
        return;
      }
      try {
        const { payload } = await jwtVerify(token, jwks, {
          issuer: as.issuer,
          audience: resource(),
          typ: 'at+jwt',
          algorithms: ['RS256'],
          clockTolerance: 0,
        });
        seen.push({ sub: payload.sub, scope: payload.scope as string });
      } catch {
        res.writeHead(401, { 'www-authenticate': `${challenge}, error="invalid_token"` }).end();
        return;
      }
      const server = new McpServer({ name: 'stub', version: '1.0.0' });
      server.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => ({
        content: [{ type: 'text', text }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => rs.listen(port, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    rs?.closeAllConnections();
    await new Promise((resolve) => rs?.close(resolve));
    await as?.stop();
  });

  /** The SDK's documented flow: connect, UnauthorizedError, finishAuth(code), connect again. */
  const connect = async (login: HttpLoginProvider) => {
    const url = new URL(resource());
    const first = new StreamableHTTPClientTransport(url, { authProvider: login });
    const client = new Client({ name: 'harness-test', version: '1.0.0' });
    await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    await first.finishAuth(login.takeAuthorizationCode());
    const again = new Client({ name: 'harness-test', version: '1.0.0' });
    await again.connect(new StreamableHTTPClientTransport(url, { authProvider: login }));
    return again;
  };

  it('the SDK discovers, registers, logs in with PKCE and gets a JWT for the resource', async () => {
    const login = new HttpLoginProvider({ user: 'alice' });
    const client = await connect(login);
    const echoed = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'hi' }]);
    expect(login.authorizations).toBe(1);

    const token = login.tokens()!;
    expect(token.refresh_token).toBeTruthy();
    expect(decodeProtectedHeader(token.access_token)).toMatchObject({
      alg: 'RS256',
      typ: 'at+jwt',
      kid: as.currentKid,
    });
    expect(decodeJwt(token.access_token)).toMatchObject({
      iss: as.issuer,
      sub: 'alice',
      aud: resource(),
      scope: 'mcp:tools',
      client_id: login.clientInformation()!.client_id,
    });
    await client.close();
  });

  it('refreshes when the access token expires, without a second login', async () => {
    as.accessTokenTtlSeconds = 1;
    try {
      const login = new HttpLoginProvider({ user: 'bob' });
      const client = await connect(login);
      const before = login.tokens()!.access_token;
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      await client.callTool({ name: 'echo', arguments: { text: 'after expiry' } });
      expect(login.authorizations).toBe(1);
      // At least one refresh: on a loaded machine the 1 s token may also expire during the connect itself.
      expect(login.tokenSaves).toBeGreaterThanOrEqual(2);
      const after = login.tokens()!.access_token;
      expect(after).not.toBe(before);
      expect(decodeJwt(after)).toMatchObject({ sub: 'bob', aud: resource(), scope: 'mcp:tools' });
      expect(seen.at(-1)).toEqual({ sub: 'bob', scope: 'mcp:tools' });
      await client.close();
    } finally {
      as.accessTokenTtlSeconds = 60;
    }
  });

  it('requires PKCE with S256, and a user can deny consent', async () => {
    const login = new HttpLoginProvider({ user: 'alice' });
    await connect(login); // registers the client
    const client = login.clientInformation()!;
    const authorize = (extra: Record<string, string>) =>
      driveAuthorization(
        new URL(
          `${as.issuer}/auth?${new URLSearchParams({
            response_type: 'code',
            client_id: client.client_id,
            redirect_uri: login.redirectUrl,
            scope: 'mcp:tools',
            resource: resource(),
            ...extra,
          })}`,
        ),
        { user: 'alice', redirectUrl: login.redirectUrl },
      );
    expect(await authorize({})).toMatchObject({ error: 'invalid_request' });
    expect(await authorize({ code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' })).toMatchObject({
      error: 'invalid_request',
    });
    const denied = await driveAuthorization(
      new URL(
        `${as.issuer}/auth?${new URLSearchParams({
          response_type: 'code',
          client_id: client.client_id,
          redirect_uri: login.redirectUrl,
          scope: 'mcp:tools',
          resource: resource(),
          code_challenge: 'x'.repeat(43),
          code_challenge_method: 'S256',
        })}`,
      ),
      { user: 'alice', redirectUrl: login.redirectUrl, consent: false },
    );
    expect(denied).toMatchObject({ error: 'access_denied' });
  });

  it('serves its metadata at both well-known paths by default, or at only the OpenID one', async () => {
    const status = (issuer: string, path: string) => fetch(`${issuer}/.well-known/${path}`).then((r) => r.status);
    expect(await status(as.issuer, 'oauth-authorization-server')).toBe(404);
    const doc = (await (await fetch(`${as.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(doc).toMatchObject({ issuer: as.issuer, code_challenge_methods_supported: ['S256'] });
    expect(doc.registration_endpoint).toBeTruthy();
    const both = await startAuthorizationServer();
    try {
      expect(await status(both.issuer, 'oauth-authorization-server')).toBe(200);
      expect(await status(both.issuer, 'openid-configuration')).toBe(200);
    } finally {
      await both.stop();
    }
  });

  it('issues client_credentials tokens for a resource, with or without the scope', async () => {
    const machine = await as.clientCredentialsToken(resource());
    expect(decodeJwt(machine.access_token)).toMatchObject({ aud: resource(), scope: 'mcp:tools', iss: as.issuer });
    const scopeless = await as.clientCredentialsToken(resource(), '');
    expect(decodeJwt(scopeless.access_token).scope).toBeUndefined();
  });

  it('rotates keys: the new kid signs, the JWKS publishes it, the old one stays or goes', async () => {
    const old = as.currentKid;
    const kid = await as.rotateKeys();
    expect(kid).not.toBe(old);
    expect(as.publishedKids()).toEqual([kid, old]);
    const published = async () =>
      ((await (await fetch(`${as.issuer}/jwks`)).json()) as { keys: { kid: string; d?: string }[] }).keys;
    expect((await published()).map((k) => k.kid)).toEqual([kid, old]);
    expect((await published()).every((k) => k.d === undefined)).toBe(true);
    const token = await as.clientCredentialsToken(resource());
    expect(decodeProtectedHeader(token.access_token).kid).toBe(kid);

    const dropped = await as.rotateKeys({ keepOld: false });
    expect((await published()).map((k) => k.kid)).toEqual([dropped]);
    // The machine client registered before both rotations still works: storage survives.
    expect(decodeProtectedHeader((await as.clientCredentialsToken(resource())).access_token).kid).toBe(dropped);
  });

  it('mints the tokens the negative tests need', async () => {
    const jwks = createRemoteJWKSet(new URL(`${as.issuer}/jwks`));
    const verify = (token: string) =>
      jwtVerify(token, jwks, { issuer: as.issuer, audience: resource(), algorithms: ['RS256'], clockTolerance: 0 });
    await expect(verify(await as.mintToken({ aud: resource() }))).resolves.toBeTruthy();
    await expect(verify(await as.mintToken({ aud: resource(), expiresIn: -60 }))).rejects.toThrow(/exp/);
    await expect(verify(await as.mintToken({ aud: 'http://elsewhere/x' }))).rejects.toThrow(/aud/);
    await expect(verify(await as.mintToken({ aud: resource(), key: 'unpublished' }))).rejects.toThrow(
      /no applicable key/,
    );
    const none = await as.mintToken({ aud: resource(), key: 'none' });
    expect(decodeProtectedHeader(none).alg).toBe('none');
    expect(none.endsWith('.')).toBe(true);
    await expect(verify(none)).rejects.toThrow();
    expect(decodeJwt(await as.mintToken({ aud: resource(), scope: null })).scope).toBeUndefined();
    expect(decodeJwt(await as.mintToken({ aud: resource(), claims: { groups: ['admins'] } })).groups).toEqual([
      'admins',
    ]);
  });

  it('records every token its introspection endpoint is asked about, known or not', async () => {
    const client = await as.registerMachineClient();
    const introspect = async (token: string) => {
      const endpoint = (
        (await (await fetch(`${as.issuer}/.well-known/openid-configuration`)).json()) as {
          introspection_endpoint: string;
        }
      ).introspection_endpoint;
      const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
        body: new URLSearchParams({ token }),
      });
      return ((await response.json()) as { active: boolean }).active;
    };
    const before = as.introspected.length;
    expect(await introspect('made-up-token')).toBe(false);
    expect(await introspect('bak_another-made-up-token')).toBe(false);
    expect(as.introspected.slice(before)).toEqual(['made-up-token', 'bak_another-made-up-token']);
  });
});
