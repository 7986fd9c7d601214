import {
  connectMcp,
  freePort,
  HttpLoginProvider,
  startAuthorizationServer,
  startTestStack,
  type AuthorizationServer,
  type TestStack,
} from '@mcpgw/devstack';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { request as httpRequest } from 'node:http';
import { Client as PgClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const SCOPE = 'mcp:tools';

/** The parameters of a `WWW-Authenticate: Bearer k="v", …` challenge. */
function bearerChallenge(header: string | null): Record<string, string> {
  expect(header).toMatch(/^Bearer\b/);
  return Object.fromEntries([...header!.matchAll(/([\w-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

/** A POST from another loopback address than 127.0.0.1: another client, as the gateway sees it. */
function postFrom(localAddress: string, url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const req = httpRequest(url, {
      method: 'POST',
      localAddress,
      headers: { ...HEADERS, authorization: `Bearer ${token}` },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * OAuth 2.1 resource-server mode (issue 25), with a real authorization server
 * (oidc-provider, devstack/oauth) and the official SDK's OAuth client, which
 * knows only the agent's MCP URL.
 */
describe('OAuth resource-server mode', () => {
  let as: AuthorizationServer;
  /** A second, real authorization server the gateway does not trust. */
  let foreign: AuthorizationServer;
  let env: TestStack;
  let base: string;
  /** The agent's MCP URL, which is also its resource identifier (RFC 8707). */
  let resource: string;
  let metadataUrl: string;
  /** The origins of the gateways that introspect opaque tokens (added by their tests). */
  const opaqueBases: string[] = [];
  let unique = 0;
  const fresh = (label: string) => `${label}-${Date.now()}-${unique++}`;

  /** A raw request with a bearer token (or none), to see the status and the challenge. */
  const post = async (
    token: string | undefined,
    body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    headers: Record<string, string> = {},
  ) => {
    const response = await fetch(resource, {
      method: 'POST',
      headers: { ...HEADERS, ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    expect(text).not.toMatch(/\n\s+at |\.ts:\d+/);
    return {
      status: response.status,
      challenge: response.headers.get('www-authenticate'),
      text,
      headers: response.headers,
    };
  };
  const callCounter = (token: string, args: Record<string, unknown>) =>
    post(token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'counter', arguments: args } });

  /** The SDK's documented flow: connect, UnauthorizedError, finishAuth(code), connect again with the same provider. */
  const logIn = async (login: HttpLoginProvider) => {
    const first = new StreamableHTTPClientTransport(new URL(resource), { authProvider: login });
    await expect(new Client({ name: 'oauth-e2e', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    await first.finishAuth(login.takeAuthorizationCode());
    const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: login });
    const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
    await client.connect(transport);
    return { client, transport };
  };

  const alice = new HttpLoginProvider({ user: 'alice' });
  const bob = new HttpLoginProvider({ user: 'bob' });
  let aliceSession: Awaited<ReturnType<typeof logIn>>;

  beforeAll(async () => {
    // OpenID discovery only (like Auth0 or Entra ID): gateway and SDK both fall back from RFC 8414 to it.
    as = await startAuthorizationServer({
      discovery: 'openid',
      // The introspecting gateway's resources get opaque tokens (RFC 7662); the rest JWTs.
      opaqueFor: (resource) => opaqueBases.some((base) => resource.startsWith(`${base}/`)),
    });
    foreign = await startAuthorizationServer();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = await startTestStack({
      gatewayEnv: {
        GATEWAY_PORT: String(port),
        PUBLIC_BASE_URL: base,
        OAUTH_ISSUERS: as.issuer,
        // No skew on one machine: the refresh case need not wait out the default 30 s.
        OAUTH_CLOCK_TOLERANCE_SECONDS: '0',
        // A rotation seconds after the first fetch of the keys need not wait out the default 30 s.
        OAUTH_JWKS_REFETCH_MS: '1000',
        // Webhooks registered over REST below point at a closed loopback port the SSRF guard must admit.
        WEBHOOK_ALLOWED_HOSTS: '127.0.0.1:9',
      },
    });
    resource = `${base}/${env.agentId}/mcp`;
    metadataUrl = `${base}/.well-known/oauth-protected-resource/${env.agentId}/mcp`;
  });

  afterAll(async () => {
    await aliceSession?.client.close();
    await env?.stop();
    await foreign?.stop();
    await as?.stop();
  });

  it('publishes protected-resource metadata (RFC 9728) for the agent', async () => {
    const response = await fetch(metadataUrl);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      resource,
      authorization_servers: [as.issuer],
      scopes_supported: [SCOPE],
      bearer_methods_supported: ['header'],
    });
  });

  it('answers a request without credentials 401, pointing to the metadata and the scope', async () => {
    const answer = await post(undefined);
    expect(answer.status).toBe(401);
    expect(bearerChallenge(answer.challenge)).toMatchObject({ resource_metadata: metadataUrl, scope: SCOPE });
  });

  it('the SDK client, knowing only the URL, discovers, registers, logs in with PKCE, lists and calls tools', async () => {
    aliceSession = await logIn(alice);
    const { client, transport } = aliceSession;
    expect(alice.authorizations).toBe(1);
    expect(alice.clientInformation()?.client_id).toBeTruthy(); // registered dynamically
    expect(transport.sessionId).toBeTruthy();

    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('echo');
    const echoed = await client.callTool({ name: 'echo', arguments: { text: 'hello over OAuth' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'hello over OAuth' }]);

    const token = alice.tokens()!.access_token;
    expect(decodeProtectedHeader(token)).toMatchObject({ typ: 'at+jwt', kid: as.currentKid });
    expect(decodeJwt(token)).toMatchObject({ iss: as.issuer, sub: 'alice', aud: resource, scope: SCOPE });
  });

  it("tells the agent the caller's issuer, subject and scopes, never its token", async () => {
    const db = new PgClient({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<{ envelope: { sender: { id: string }; meta?: Record<string, unknown> } }>(
        `SELECT envelope FROM messaging.messages
          WHERE type = 'chat_message' AND envelope->'tool_call'->'arguments'->>'text' = 'hello over OAuth'`,
      );
      expect(rows).toHaveLength(1);
      const [{ envelope }] = rows;
      expect(envelope.sender.id).toMatch(/^oauth:[A-Za-z0-9_-]{22}$/);
      expect(envelope.meta?.principal).toEqual({ issuer: as.issuer, subject: 'alice', scopes: [SCOPE] });
      const token = alice.tokens()!.access_token;
      expect(JSON.stringify(envelope)).not.toContain(token.split('.')[2]);
    } finally {
      await db.end();
    }
  });

  it('agent auth --oauth off: the agent refuses tokens (API keys still open it) until it is on again', async () => {
    const token = (await as.clientCredentialsToken(resource)).access_token;
    const admin = (state: 'on' | 'off') => env.stack.admin('agent', 'auth', '--agent', env.agentId, '--oauth', state);
    await admin('off');
    try {
      await expect.poll(async () => (await post(token)).status, { timeout: 10_000, interval: 200 }).toBe(401);
      const refused = await post(token);
      expect(refused.text).toContain('this agent takes no OAuth access tokens');
      const withKey = await connectMcp(resource, env.apiKey);
      expect((await withKey.client.listTools()).tools.length).toBeGreaterThan(0);
      await withKey.close();
    } finally {
      await admin('on');
    }
    await expect.poll(async () => (await post(token)).status, { timeout: 10_000, interval: 200 }).toBe(200);
  });

  it('an OAuth caller presigns uploads and keeps webhooks of its own, as a key does', async () => {
    const tokenOf = (sub: string) => as.mintToken({ sub, aud: resource });
    const [aliceToken, bobToken] = await Promise.all([tokenOf('alice'), tokenOf('bob')]);
    const json = { 'content-type': 'application/json' };

    // Files: the endpoint names no agent; the token's audience does, and is checked for it.
    const presign = (authorization: string) =>
      fetch(`${base}/api/v1/files/presign-upload`, {
        method: 'POST',
        headers: { ...json, authorization },
        body: JSON.stringify({ filename: 'notes.txt', content_type: 'text/plain', size: 5 }),
      });
    expect((await presign(`Bearer ${aliceToken}`)).status).toBe(201);
    const elsewhere = await as.mintToken({ sub: 'alice', aud: 'https://api.example.com' });
    expect((await presign(`Bearer ${elsewhere}`)).status).toBe(401);

    // Webhooks: alice's is hers; bob and the agent's API key do not see it.
    const hooks = `${base}/api/v1/agents/${env.agentId}/webhooks`;
    const made = await fetch(hooks, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${aliceToken}` },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/alice', events: ['tool_call.completed'] }),
    });
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: string };
    const listed = async (headers: Record<string, string>) =>
      ((await (await fetch(hooks, { headers })).json()) as { id: string }[]).map((hook) => hook.id);
    expect(await listed({ authorization: `Bearer ${aliceToken}` })).toEqual([id]);
    expect(await listed({ authorization: `Bearer ${bobToken}` })).toEqual([]);
    expect(await listed({ 'x-agent-api-key': env.apiKey })).toEqual([]);
    const removedByBob = await fetch(`${hooks}/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${bobToken}` },
    });
    expect(removedByBob.status).toBe(404);
  });

  it('accepts a client_credentials token of a machine client, and API keys keep working beside OAuth', async () => {
    const machine = await as.clientCredentialsToken(resource);
    const transport = new StreamableHTTPClientTransport(new URL(resource), {
      requestInit: { headers: { authorization: `Bearer ${machine.access_token}` } },
    });
    const client = new Client({ name: 'oauth-e2e-machine', version: '1.0.0' });
    await client.connect(transport);
    const echoed = await client.callTool({ name: 'echo', arguments: { text: 'machine' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'machine' }]);
    await client.close();

    const withKey = await connectMcp(resource, env.apiKey);
    expect((await withKey.client.listTools()).tools.map((t) => t.name)).toContain('echo');
    await withKey.close();
  });

  // Before the unknown-key case below: each unknown kid may refetch the JWKS, and refetches are rate-limited.
  it('picks up a key rotation at the authorization server without a restart', async () => {
    const before = await as.clientCredentialsToken(resource);
    expect((await post(before.access_token)).status).toBe(200);
    const oldKid = as.currentKid;
    const newKid = await as.rotateKeys();
    const after = await as.clientCredentialsToken(resource);
    expect(decodeProtectedHeader(after.access_token).kid).toBe(newKid);
    expect(newKid).not.toBe(oldKid);
    await expect
      .poll(async () => (await post(after.access_token)).status, { timeout: 30_000, interval: 500 })
      .toBe(200);
    // The old key is still published: tokens it signed stay good until they expire.
    expect((await post(before.access_token)).status).toBe(200);
  });

  describe('refuses, with the documented status and challenge', () => {
    const cases: [string, () => Promise<string>][] = [
      ['a token that is not a JWT', async () => 'not-a-jwt'],
      [
        "a token for another agent's resource",
        async () => (await as.clientCredentialsToken(`${base}/other-agent/mcp`)).access_token,
      ],
      [
        'a token of another issuer (a real authorization server not in OAUTH_ISSUERS)',
        async () => (await foreign.clientCredentialsToken(resource)).access_token,
      ],
      ['an expired token', () => as.mintToken({ aud: resource, expiresIn: -3_600 })],
      ['a token not valid yet (nbf an hour ahead)', () => as.mintToken({ aud: resource, notBefore: 3_600 })],
      [
        'a token that names the trusted issuer but is signed by another',
        () => as.mintToken({ aud: resource, key: 'unpublished' }),
      ],
      ['an unsigned token (alg: none)', () => as.mintToken({ aud: resource, key: 'none' })],
      ['a token without an audience', () => as.mintToken({})],
    ];
    it.each(cases)('%s: 401 invalid_token', async (_label, make) => {
      const token = await make();
      const answer = await post(token);
      expect(answer.status).toBe(401);
      expect(bearerChallenge(answer.challenge)).toMatchObject({
        error: 'invalid_token',
        scope: SCOPE,
        resource_metadata: metadataUrl,
      });
      // The refusal says which check failed, never the token or its claims.
      for (const part of token.split('.').filter((p) => p.length > 12)) {
        expect(answer.challenge).not.toContain(part);
        expect(answer.text).not.toContain(part);
      }
    });

    it('a valid token without the scope: 403 insufficient_scope, naming the scope to ask for', async () => {
      const scopeless = await as.clientCredentialsToken(resource, '');
      expect(decodeJwt(scopeless.access_token).scope).toBeUndefined();
      const answer = await post(scopeless.access_token);
      expect(answer.status).toBe(403);
      expect(bearerChallenge(answer.challenge)).toMatchObject({
        error: 'insufficient_scope',
        scope: SCOPE,
        resource_metadata: metadataUrl,
      });
    });
  });

  describe('isolation between two users of the same authorization server', () => {
    let bobToken: string;

    beforeAll(async () => {
      const bobSession = await logIn(bob);
      await bobSession.client.close();
      bobToken = bob.tokens()!.access_token;
      expect(decodeJwt(bobToken).sub).toBe('bob');
    });

    it('the same idempotency key of two users does not share a result', async () => {
      const args = { key: fresh('oauth-counter'), idempotency_key: fresh('shared') };
      const mine = await callCounter(alice.tokens()!.access_token, args);
      const theirs = await callCounter(bobToken, args);
      expect(mine.status).toBe(200);
      expect(theirs.status).toBe(200);
      expect(theirs.headers.get('idempotent-replayed')).toBeNull();
      expect(JSON.parse(mine.text).result.structuredContent.count).toBe(1);
      expect(JSON.parse(theirs.text).result.structuredContent.count).toBe(2);
      // Alice's retry is hers: a replay.
      const again = await callCounter(alice.tokens()!.access_token, args);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    });

    it("bob cannot see or cancel alice's task (2026-07-28: each request authenticates)", async () => {
      const VERSION = '2026-07-28';
      const TASKS = 'io.modelcontextprotocol/tasks';
      const stateless = async (token: string, method: string, params: Record<string, unknown>) => {
        const answer = await post(
          token,
          {
            jsonrpc: '2.0',
            id: 1,
            method,
            params: {
              _meta: {
                'io.modelcontextprotocol/protocolVersion': VERSION,
                'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
                'io.modelcontextprotocol/clientInfo': { name: 'oauth-e2e', version: '1.0.0' },
              },
              ...params,
            },
          },
          { 'mcp-protocol-version': VERSION, 'mcp-method': method, 'mcp-name': String(params.name ?? params.taskId) },
        );
        expect(answer.status).toBe(200);
        return JSON.parse(answer.text) as { result?: { taskId?: string; status?: string }; error?: { code: number } };
      };
      const aliceToken = alice.tokens()!.access_token;
      const created = await stateless(aliceToken, 'tools/call', { name: 'long_report', arguments: { seconds: 0.5 } });
      expect(created.result).toMatchObject({ resultType: 'task' });
      const taskId = created.result!.taskId!;
      expect((await stateless(bobToken, 'tasks/get', { taskId })).error?.code).toBe(-32602);
      expect((await stateless(bobToken, 'tasks/cancel', { taskId })).error?.code).toBe(-32602);
      expect((await stateless(aliceToken, 'tasks/get', { taskId })).result?.taskId).toBe(taskId);
    });

    it("bob cannot use alice's session: 404", async () => {
      const sessionId = aliceSession.transport.sessionId!;
      const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
      expect((await post(alice.tokens()!.access_token, ping, { 'mcp-session-id': sessionId })).status).toBe(200);
      expect((await post(bobToken, ping, { 'mcp-session-id': sessionId })).status).toBe(404);
    });
  });

  it('OAUTH_TOOLS_CLAIM: a caller sees and calls only the tools its claim values map to', async () => {
    const port = await freePort();
    const mapped = `http://127.0.0.1:${port}`;
    await env.stack.startGateway({
      GATEWAY_PORT: String(port),
      PUBLIC_BASE_URL: mapped,
      OAUTH_ISSUERS: as.issuer,
      OAUTH_TOOLS_CLAIM: 'scope',
      OAUTH_TOOLS_BY_CLAIM: 'mcp:admin=*;mcp:tools=echo',
    });
    const url = `${mapped}/${env.agentId}/mcp`;
    const client = async (scope: string) => {
      const token = await as.mintToken({ aud: url, scope });
      const connected = new Client({ name: 'oauth-e2e-mapped', version: '1.0.0' });
      await connected.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return connected;
    };
    const user = await client(SCOPE);
    try {
      expect((await user.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
      expect((await user.callTool({ name: 'echo', arguments: { text: 'mapped' } })).content).toEqual([
        { type: 'text', text: 'mapped' },
      ]);
      // Another tool of the agent is, to this caller, no tool at all: the same error as an unknown one.
      const hidden = await user.callTool({ name: 'counter', arguments: {} }).catch((e: { code?: number }) => e);
      const unknown = await user.callTool({ name: 'no_such_tool', arguments: {} }).catch((e: { code?: number }) => e);
      expect((hidden as { code?: number }).code).toBeDefined();
      expect((hidden as { code?: number }).code).toBe((unknown as { code?: number }).code);
    } finally {
      await user.close();
    }
    const admin = await client(`${SCOPE} mcp:admin`);
    try {
      expect((await admin.listTools()).tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['echo', 'counter', 'sleep']),
      );
    } finally {
      await admin.close();
    }
  });

  it('OAUTH_INTROSPECTION_ISSUER: an opaque token is asked about at its issuer and held to the same rules', async () => {
    const port = await freePort();
    const opaqueBase = `http://127.0.0.1:${port}`;
    opaqueBases.push(opaqueBase);
    const gatewayClient = await as.registerMachineClient();
    await env.stack.startGateway({
      GATEWAY_PORT: String(port),
      PUBLIC_BASE_URL: opaqueBase,
      OAUTH_ISSUERS: as.issuer,
      OAUTH_INTROSPECTION_ISSUER: as.issuer,
      OAUTH_INTROSPECTION_CLIENT_ID: gatewayClient.client_id,
      OAUTH_INTROSPECTION_CLIENT_SECRET: gatewayClient.client_secret!,
    });
    const url = `${opaqueBase}/${env.agentId}/mcp`;
    const opaque = (await as.clientCredentialsToken(url)).access_token;
    expect(opaque.split('.')).not.toHaveLength(3); // not a JWT

    const client = new Client({ name: 'oauth-e2e-opaque', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${opaque}` } },
      }),
    );
    try {
      expect((await client.callTool({ name: 'echo', arguments: { text: 'opaque' } })).content).toEqual([
        { type: 'text', text: 'opaque' },
      ]);
    } finally {
      await client.close();
    }
    const raw = async (token: string) =>
      fetch(url, {
        method: 'POST',
        headers: { ...HEADERS, authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    // Another agent's opaque token, and one the issuer never issued: 401 invalid_token.
    const otherAgent = (await as.clientCredentialsToken(`${opaqueBase}/other-agent/mcp`)).access_token;
    for (const [token, reason] of [
      [otherAgent, 'the access token is for another resource'],
      ['made-up-opaque-token-value', 'the access token is not active'],
    ]) {
      const answer = await raw(token);
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect(await answer.text()).toContain(reason);
    }

    // The gateway's own secrets (a real API key of the agent, a PAT's shape) are refused as they are,
    // and never posted to the issuer's introspection endpoint.
    const asked = as.introspected.length;
    for (const secret of [env.apiKey, `pat_${'A'.repeat(12)}_${'b'.repeat(43)}`]) {
      expect(secret).toMatch(/^(bak|pat)_/);
      const answer = await raw(secret);
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect(await answer.text()).toContain('of this gateway, not an access token');
    }
    expect(as.introspected.slice(asked)).toEqual([]);
    // The control: a made-up token of no such shape is asked about.
    expect((await raw('made-up-opaque-token-2')).status).toBe(401);
    expect(as.introspected.slice(asked)).toEqual(['made-up-opaque-token-2']);
  });

  it('a flood of made-up opaque tokens from one address is stopped there: the issuer is not asked, others get in', async () => {
    const port = await freePort();
    const floodBase = `http://127.0.0.1:${port}`;
    opaqueBases.push(floodBase);
    const gatewayClient = await as.registerMachineClient();
    await env.stack.startGateway({
      GATEWAY_PORT: String(port),
      PUBLIC_BASE_URL: floodBase,
      OAUTH_ISSUERS: as.issuer,
      OAUTH_INTROSPECTION_ISSUER: as.issuer,
      OAUTH_INTROSPECTION_CLIENT_ID: gatewayClient.client_id,
      OAUTH_INTROSPECTION_CLIENT_SECRET: gatewayClient.client_secret!,
      OAUTH_INTROSPECTION_PER_SOURCE_PER_MINUTE: '5',
      // Active answers are kept 1 s: the token seen valid is asked about again during the flood.
      OAUTH_INTROSPECTION_CACHE_SECONDS: '1',
    });
    const url = `${floodBase}/${env.agentId}/mcp`;
    const status = async (token: string) =>
      (
        await fetch(url, {
          method: 'POST',
          headers: { ...HEADERS, authorization: `Bearer ${token}` },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        })
      ).status;
    const timesAsked = (token: string) => as.introspected.filter((t) => t === token).length;

    const valid = (await as.clientCredentialsToken(url)).access_token;
    expect(await status(valid)).toBe(200);
    expect(timesAsked(valid)).toBe(1);

    const asked = as.introspected.length;
    const flood = Array.from({ length: 40 }, (_, i) => `made-up-${Date.now()}-${i}`);
    const answers = await Promise.all(flood.map(status));
    const reachedIssuer = as.introspected.slice(asked).filter((t) => flood.includes(t));
    expect(reachedIssuer.length).toBeLessThanOrEqual(5);
    expect(answers.filter((s) => s === 429)).toHaveLength(flood.length - reachedIssuer.length);
    expect(answers.filter((s) => s === 401)).toHaveLength(reachedIssuer.length);

    // The same address, still flooding: a new made-up token is refused before the issuer is asked,
    // while the token seen valid before is asked about again once its answer expires, and gets in.
    expect(await status(`made-up-${Date.now()}-late`)).toBe(429);
    const seen: number[] = [];
    await expect
      .poll(
        async () => {
          seen.push(await status(valid));
          return timesAsked(valid);
        },
        { timeout: 15_000, interval: 250 },
      )
      .toBe(2);
    expect(new Set(seen)).toEqual(new Set([200]));

    // Another address is not locked out: its new token is asked about and taken.
    const other = (await as.clientCredentialsToken(url)).access_token;
    expect(await postFrom('127.0.0.2', url, other)).toBe(200);
    expect(timesAsked(other)).toBe(1);
  });

  it('OAUTH_POLICY: several issuers, each with its own scopes, tools by claim and agents', async () => {
    const partner = await startAuthorizationServer({ resourceScopes: ['partner:mcp'] });
    const corpOnly = fresh('corp-only').slice(0, 40);
    await env.addAgent(corpOnly);
    try {
      const port = await freePort();
      const policyBase = `http://127.0.0.1:${port}`;
      await env.stack.startGateway({
        GATEWAY_PORT: String(port),
        PUBLIC_BASE_URL: policyBase,
        OAUTH_POLICY: JSON.stringify({
          issuers: [
            {
              issuer: as.issuer,
              agents: '*',
              scopes: [SCOPE],
              tools_claim: 'groups',
              tools_by_claim: { admins: ['*'], support: ['echo'] },
            },
            {
              issuer: partner.issuer,
              agents: [env.agentId],
              scopes: ['partner:mcp'],
              tools_claim: 'groups',
              tools_by_claim: { support: ['echo'] },
            },
          ],
        }),
      });
      const urlOf = (agent: string) => `${policyBase}/${agent}/mcp`;
      const url = urlOf(env.agentId);
      const toolsOf = async (token: string) => {
        const client = new Client({ name: 'oauth-e2e-policy', version: '1.0.0' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(url), {
            requestInit: { headers: { authorization: `Bearer ${token}` } },
          }),
        );
        try {
          return (await client.listTools()).tools.map((t) => t.name);
        } finally {
          await client.close();
        }
      };
      const raw = async (agent: string, token: string) => {
        const response = await fetch(urlOf(agent), {
          method: 'POST',
          headers: { ...HEADERS, authorization: `Bearer ${token}` },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
        return {
          status: response.status,
          challenge: response.headers.get('www-authenticate'),
          text: await response.text(),
        };
      };

      // groups=admins opens every tool for the corporate issuer's users, not for the partner's.
      const corpAdmin = await as.mintToken({ aud: url, scope: SCOPE, claims: { groups: ['admins'] } });
      expect(await toolsOf(corpAdmin)).toEqual(expect.arrayContaining(['echo', 'counter', 'sleep']));
      const partnerAdmin = await partner.mintToken({ aud: url, scope: 'partner:mcp', claims: { groups: ['admins'] } });
      expect(await toolsOf(partnerAdmin)).toEqual([]);
      const partnerSupport = await partner.mintToken({
        aud: url,
        scope: 'partner:mcp',
        claims: { groups: ['support'] },
      });
      expect(await toolsOf(partnerSupport)).toEqual(['echo']);

      // Scopes per issuer: the partner's tokens need partner:mcp (the corporate scope is not enough), and the
      // challenge names it.
      const partnerWrongScope = await partner.mintToken({ aud: url, scope: SCOPE, claims: { groups: ['support'] } });
      const short = await raw(env.agentId, partnerWrongScope);
      expect(short.status).toBe(403);
      expect(bearerChallenge(short.challenge)).toMatchObject({ error: 'insufficient_scope', scope: 'partner:mcp' });
      const corpWrongScope = await as.mintToken({ aud: url, scope: 'partner:mcp', claims: { groups: ['admins'] } });
      expect((await raw(env.agentId, corpWrongScope)).status).toBe(403);

      // An agent the partner's entry does not list: its tokens are refused there as an untrusted issuer's,
      // and the agent's metadata names only the corporate issuer.
      const partnerOnCorpOnly = await partner.mintToken({ aud: urlOf(corpOnly), scope: 'partner:mcp' });
      const refused = await raw(corpOnly, partnerOnCorpOnly);
      expect(refused.status).toBe(401);
      expect(bearerChallenge(refused.challenge)).toMatchObject({ error: 'invalid_token' });
      expect(refused.text).toContain('the access token is not from a trusted issuer');
      const corpOnCorpOnly = await as.mintToken({ aud: urlOf(corpOnly), scope: SCOPE, claims: { groups: ['admins'] } });
      expect((await raw(corpOnly, corpOnCorpOnly)).status).toBe(200);

      const metadata = async (agent: string) =>
        (await (await fetch(`${policyBase}/.well-known/oauth-protected-resource/${agent}/mcp`)).json()) as {
          authorization_servers: string[];
          scopes_supported?: string[];
        };
      expect((await metadata(corpOnly)).authorization_servers).toEqual([as.issuer]);
      expect((await metadata(corpOnly)).scopes_supported).toEqual([SCOPE]);
      expect((await metadata(env.agentId)).authorization_servers).toEqual([as.issuer, partner.issuer]);
    } finally {
      await partner.stop();
    }
  });

  // Last: it waits for a token to expire.
  it('refreshes the token when it expires, without a second login, in the same session', async () => {
    as.accessTokenTtlSeconds = 3;
    try {
      const refreshing = new HttpLoginProvider({ user: 'alice', clientName: 'refreshing client' });
      const { client, transport } = await logIn(refreshing);
      const sessionId = transport.sessionId;
      const first = refreshing.tokens()!.access_token;
      // Whatever clock tolerance the gateway allows: wait until it refuses the first token.
      await expect.poll(async () => (await post(first)).status, { timeout: 60_000, interval: 1_000 }).toBe(401);

      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'after the refresh' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'after the refresh' }]);
      expect(refreshing.authorizations).toBe(1);
      expect(refreshing.tokenSaves).toBe(2);
      const refreshed = refreshing.tokens()!.access_token;
      expect(refreshed).not.toBe(first);
      expect(decodeJwt(refreshed)).toMatchObject({ sub: 'alice', aud: resource, scope: SCOPE });
      expect(transport.sessionId).toBe(sessionId);
      await client.close();
    } finally {
      as.accessTokenTtlSeconds = 300;
    }
  });
});
