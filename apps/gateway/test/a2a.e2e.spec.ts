import type { Message, Task } from '@a2a-js/sdk';
import {
  a2aFactory,
  a2aLegacyClient,
  type Binding,
  dataPart,
  parsePrometheus,
  startTestStack,
  type TestStack,
  textPart,
  userMessage,
} from '@mcpgw/devstack';
import { FilesApi } from '@mcpgw/files-client';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { sendMessageRaw, type RawSendAnswer } from './support/a2a-raw';
import { SIGNING_KEYS, localBackend, type Backend } from './support/file-backends';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The A2A 1.0 surface (apps/gateway/src/a2a/README.md) through the official
 * `@a2a-js/sdk` 1.3.0 client, `ClientFactory`, against the running stack, over
 * both bindings the card lists.
 */
describe('A2A 1.0: the card and SendMessage, with the official SDK client', () => {
  let env: TestStack;
  let backend: Backend;
  let base: string;

  const clientOf = (binding: Binding, headers: Record<string, string> = { 'x-agent-api-key': env.apiKey }) =>
    a2aFactory(binding, headers).createFromUrl(`${base}/a2a/${env.agentId}/`);
  const admin = <T>(...args: string[]) => env.stack.admin<T>(...args);
  /** The gateway's idempotency records of one key. */
  const recordsOf = async (key: string) => {
    const db = new PgClient({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
    try {
      return (await db.query('SELECT result, message FROM gateway.idempotency_records WHERE key = $1', [key])).rows;
    } finally {
      await db.end();
    }
  };

  beforeAll(async () => {
    backend = await localBackend();
    env = await startTestStack({ gatewayEnv: { ...backend.env(), FILES_URL_SIGNING_KEYS: SIGNING_KEYS } });
    base = env.gatewayUrls[0];
  });

  afterAll(async () => {
    await env?.stop();
    await backend?.stop();
  });

  it('the card lists one skill per served tool, both bindings, and the API key scheme', async () => {
    const response = await fetch(`${base}/a2a/${env.agentId}/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    const unknown = await fetch(`${base}/a2a/no-such-agent/.well-known/agent-card.json`);
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
    const card = await response.json();
    expect(card.supportedInterfaces).toEqual([
      { url: `${base}/a2a/${env.agentId}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: `${base}/a2a/${env.agentId}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: `${base}/a2a/${env.agentId}`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ]);
    expect(card.securitySchemes.apiKey).toEqual({
      apiKeySecurityScheme: { location: 'header', name: 'X-Agent-API-Key', description: expect.any(String) },
    });
    const tools = await admin<{ tools: { name: string }[] }>('agent', 'show', '--agent', env.agentId);
    const client = await clientOf('JSONRPC');
    const resolved = await client.getAgentCard();
    expect(resolved.skills.map((skill) => skill.id).sort()).toEqual(tools.tools.map((tool) => tool.name).sort());
    const echo = resolved.skills.find((skill) => skill.id === 'echo');
    expect(echo).toMatchObject({ name: 'Echo', description: 'Returns its input unchanged.' });
    const schemas = resolved.capabilities?.extensions.find((e) => e.uri === 'urn:mcpgw:a2a:skill-schemas:v1');
    expect(schemas?.params?.skills.echo.inputSchema).toMatchObject({ required: ['text'] });
  });

  for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
    describe(`over ${binding}`, () => {
      it('SendMessage to echo answers with the agent message: its text and its structured result', async () => {
        const client = await clientOf(binding);
        const answer = (await client.sendMessage({
          tenant: '',
          message: userMessage('echo', [dataPart({ text: `hello over A2A ${binding}` })]),
          configuration: undefined,
          metadata: undefined,
        })) as Message;
        expect(answer.role).toBe(2); // ROLE_AGENT
        expect(answer.messageId).toMatch(/^call_[0-9a-f]{32}$/);
        expect(answer.parts.map((part) => part.content)).toEqual([
          { $case: 'text', value: `hello over A2A ${binding}` },
          { $case: 'data', value: { text: `hello over A2A ${binding}` } },
        ]);
        expect(answer.metadata).toMatchObject({ skill: 'echo', 'mcpgw/callId': answer.messageId });
        expect(answer.contextId).not.toBe('');
      });

      it('text parts become {"text": …}; an unknown skill and bad arguments are -32602 / INVALID_ARGUMENT', async () => {
        const client = await clientOf(binding);
        const answer = (await client.sendMessage({
          tenant: '',
          message: userMessage('echo', [textPart('plain'), textPart('text')]),
          configuration: undefined,
          metadata: undefined,
        })) as Message;
        expect(answer.parts[0].content).toEqual({ $case: 'text', value: 'plain\ntext' });
        for (const [skill, data] of [
          ['no_such_skill', { text: 'x' }],
          ['echo', { nope: 1 }],
        ] as const) {
          const refused = await client
            .sendMessage({
              tenant: '',
              message: userMessage(skill, [dataPart(data)]),
              configuration: undefined,
              metadata: undefined,
            })
            .catch((error: unknown) => error as Error & { name: string });
          expect(refused).toBeInstanceOf(Error);
          expect((refused as Error).name).toBe('RequestMalformedError');
        }
      });

      it('a wrong key, no key, and another agent’s key are refused alike (401)', async () => {
        const other = await env.addAgent(`a2a-other-${binding === 'JSONRPC' ? 'rpc' : 'rest'}`);
        const card = await (await clientOf(binding)).getAgentCard();
        for (const headers of [{}, { 'x-agent-api-key': 'sk_live_wrong' }, { 'x-agent-api-key': other.apiKey }]) {
          const client = await a2aFactory(binding, headers).createFromAgentCard(card);
          const refused = await client
            .sendMessage({
              tenant: '',
              message: userMessage('echo', [dataPart({ text: 'x' })]),
              configuration: undefined,
              metadata: undefined,
            })
            .catch((error: unknown) => error as Error);
          expect(refused).toBeInstanceOf(Error);
        }
        const url =
          binding === 'JSONRPC' ? `${base}/a2a/${env.agentId}` : `${base}/a2a/${env.agentId}/rest/message:send`;
        const raw = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-agent-api-key': other.apiKey },
          body: '{}',
        });
        expect(raw.status).toBe(401);
        const body = await raw.json();
        if (binding === 'JSONRPC') expect(body.error.code).toBe(-32041);
        else expect(body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
      });
    });
  }

  it('the same messageId twice runs the counter skill once, on either binding, and answers the same message', async () => {
    const key = `a2a-${randomUUID()}`;
    const message = userMessage('counter', [dataPart({ key })]);
    const send = async (binding: Binding) =>
      (await (
        await clientOf(binding)
      ).sendMessage({
        tenant: '',
        message,
        configuration: undefined,
        metadata: undefined,
      })) as Message;
    const first = await send('JSONRPC');
    // Past the next second, where a contextId minted as of now (not of the posting) would differ.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const again = await send('HTTP+JSON');
    expect(again).toEqual(first);
    expect(first.parts[0].content).toEqual({ $case: 'text', value: '1' });
    // No record: the posting is the claim, and the repeat was its stored reply rendered again.
    expect(await recordsOf(message.messageId)).toEqual([]);
    const fresh = await (
      await clientOf('JSONRPC')
    ).sendMessage({
      tenant: '',
      message: userMessage('counter', [dataPart({ key })]),
      configuration: undefined,
      metadata: undefined,
    });
    expect((fresh as Message).parts[0].content).toEqual({ $case: 'text', value: '2' });
  });

  it('the message service refuses the messageId with other arguments: the posting is the claim', async () => {
    // No record: the message service holds the posting with its fingerprint and its key, and
    // refuses another fingerprint (apps/message-service/src/messages/README.md).
    const key = `a2a-${randomUUID()}`;
    const messageId = randomUUID();
    const send = async (args: Record<string, unknown>) =>
      (await (
        await sendMessageRaw(`${base}/a2a/${env.agentId}`, env.apiKey, { messageId, skill: 'counter', data: args })
      ).json()) as RawSendAnswer;
    const first = await send({ key });
    expect(first.result?.message?.parts[0]).toMatchObject({ text: '1' });
    const other = await send({ key, delay_ms: 1 });
    expect(other.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('another skill or other arguments'),
    });
    // The first arguments join the first posting, run once, and get the same message.
    const same = await send({ key });
    expect(same.result?.message).toEqual(first.result?.message);
    expect(await recordsOf(messageId)).toEqual([]);
  });

  it('one key space with MCP: a messageId and the same idempotency_key are one call, whichever came first', async () => {
    const a2a = async (messageId: string, data: Record<string, unknown>) =>
      (await (
        await sendMessageRaw(`${base}/a2a/${env.agentId}`, env.apiKey, { messageId, skill: 'counter', data })
      ).json()) as RawSendAnswer;
    const mcp = async (args: Record<string, unknown>) => {
      const response = await fetch(`${base}/${env.agentId}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-agent-api-key': env.apiKey,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'counter', arguments: args },
        }),
      });
      const { result, error } = (await response.json()) as {
        result: { structuredContent: { count: number }; _meta: Record<string, unknown> };
        error?: { code: number; data?: unknown };
      };
      return { result, error, replayed: response.headers.get('idempotent-replayed') };
    };
    const callIdOf = (answer: RawSendAnswer) => answer.result?.message?.metadata?.['mcpgw/callId'];

    // A2A first: no record, and MCP's posting joins A2A's, which holds the key.
    const a2aFirst = { key: `a2a-${randomUUID()}`, messageId: randomUUID() };
    const sent = await a2a(a2aFirst.messageId, { key: a2aFirst.key });
    expect(sent.result?.message?.parts[0]).toMatchObject({ text: '1' });
    const joined = await mcp({ key: a2aFirst.key, idempotency_key: a2aFirst.messageId });
    expect(joined.replayed).toBe('true');
    expect(joined.result.structuredContent.count).toBe(1);
    expect(joined.result._meta).toEqual({ 'mcpgw/callId': callIdOf(sent), 'mcpgw/idempotentReplay': true });

    // MCP first: A2A's posting joins MCP's, which holds the key.
    const mcpFirst = { key: `a2a-${randomUUID()}`, messageId: randomUUID() };
    const called = await mcp({ key: mcpFirst.key, idempotency_key: mcpFirst.messageId });
    expect(called.result.structuredContent.count).toBe(1);
    const answered = await a2a(mcpFirst.messageId, { key: mcpFirst.key });
    expect(answered.result?.message?.parts[0]).toMatchObject({ text: '1' });
    expect(callIdOf(answered)).toBe(called.result._meta['mcpgw/callId']);

    // The same key with other arguments is refused across the surfaces, both ways.
    expect((await a2a(mcpFirst.messageId, { key: 'other' })).error).toMatchObject({ code: -32602 });
    expect((await mcp({ key: 'other', idempotency_key: a2aFirst.messageId })).error).toMatchObject({
      code: -32602,
      data: { reason: 'idempotency_key_reused' },
    });
    // A task (returnImmediately) holds the key too: MCP with it joins the task's call.
    const taskFirst = { key: `a2a-${randomUUID()}`, messageId: randomUUID() };
    const started = (await (
      await sendMessageRaw(
        `${base}/a2a/${env.agentId}`,
        env.apiKey,
        { messageId: taskFirst.messageId, skill: 'counter', data: { key: taskFirst.key } },
        { returnImmediately: true },
      )
    ).json()) as RawSendAnswer;
    expect(started.result?.task).toBeDefined();
    expect(
      (await mcp({ key: taskFirst.key, idempotency_key: taskFirst.messageId })).result.structuredContent.count,
    ).toBe(1);

    // Each ran once: a call without a key counts the second run.
    for (const { key } of [a2aFirst, mcpFirst, taskFirst])
      expect((await mcp({ key })).result.structuredContent.count).toBe(2);
  });

  it('a file sent as a url part naming its id reaches the agent through a signed URL', async () => {
    const bytes = Buffer.concat([Buffer.from('%PDF-1.7 a2a\n'), randomBytes(4_000)]);
    const files = new FilesApi({ baseUrl: base, apiKey: env.apiKey });
    const fileId = await files.upload(bytes, { filename: 'q4.pdf', contentType: 'application/pdf' });
    const urlPart = (url: string) => ({
      content: { $case: 'url' as const, value: url },
      metadata: undefined,
      filename: 'q4.pdf',
      mediaType: 'application/pdf',
    });
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const answer = (await (
        await clientOf(binding)
      ).sendMessage({
        tenant: '',
        message: userMessage('summarize_pdf', [urlPart(fileId)]),
        configuration: undefined,
        metadata: undefined,
      })) as Message;
      const data = answer.parts.find((part) => part.content?.$case === 'data')?.content?.value as {
        files: { name: string; size: number; sha256: string }[];
      };
      expect(data.files[0]).toEqual(
        expect.objectContaining({
          name: 'q4.pdf',
          size: bytes.length,
          sha256: createHash('sha256').update(bytes).digest('hex'),
        }),
      );
    }
    // Someone else's file (or none) is refused like invalid arguments: nothing is posted.
    const refused = await (
      await clientOf('JSONRPC')
    )
      .sendMessage({
        tenant: '',
        message: userMessage('summarize_pdf', [urlPart('file_00000000000000000000000000000000')]),
        configuration: undefined,
        metadata: undefined,
      })
      .catch((error: Error) => error);
    expect((refused as Error).name).toBe('RequestMalformedError');
  });

  it('a 0.3 client (the SDK with legacyCompat) sends a message to echo and gets the answer; 0.3 tasks too', async () => {
    // A client that speaks 0.3 only: it takes the card's 0.3 interface.
    const client = await a2aLegacyClient(`${base}/a2a/${env.agentId}/`, { 'x-agent-api-key': env.apiKey });
    expect(client.protocolVersion).toBe('0.3');
    const answer = (await client.sendMessage({
      tenant: '',
      message: userMessage('echo', [dataPart({ text: 'hello from 0.3' })]),
      configuration: undefined,
      metadata: undefined,
    })) as Message;
    expect(answer.role).toBe(2);
    expect(answer.parts.map((part) => part.content)).toEqual([
      { $case: 'text', value: 'hello from 0.3' },
      { $case: 'data', value: { text: 'hello from 0.3' } },
    ]);
    const task = (await client.sendMessage({
      tenant: '',
      message: userMessage('echo', [dataPart({ text: 'a 0.3 task' })]),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    })) as Task;
    await expect.poll(async () => (await client.getTask({ tenant: '', id: task.id })).status?.state).toBe(3);
  });

  it('A2A calls count under surface="a2a" and are the operator’s calls like any (admin call show)', async () => {
    const answer = (await (
      await clientOf('JSONRPC')
    ).sendMessage({
      tenant: '',
      message: userMessage('echo', [dataPart({ text: 'counted' })]),
      configuration: undefined,
      metadata: undefined,
    })) as Message;
    const text = await (await fetch(`${env.stack.managementUrlOf(base)}/metrics`)).text();
    const ok = parsePrometheus(text).find(
      (s) =>
        s.name === 'mcpgw_tool_calls_total' &&
        s.labels.surface === 'a2a' &&
        s.labels.tool === 'echo' &&
        s.labels.outcome === 'ok',
    );
    expect(ok?.value ?? 0).toBeGreaterThanOrEqual(1);
    const shown = await admin<{ call_id: string; calls: { tool: string }[] }>('call', 'show', answer.messageId);
    expect(shown.call_id).toBe(answer.messageId);
    expect(shown.calls[0]).toMatchObject({ tool: 'echo' });
  });

  it('a RuntimeGrant’s card lists only its skills, needs the grant, and its messages to other skills are refused', async () => {
    const { grant } = await admin<{ grant: string }>(
      'grant',
      'mint',
      '--workspace',
      'demo',
      '--agent',
      env.agentId,
      '--task',
      'a2a-task',
      '--tools',
      'echo',
    );
    const root = `${base}/workspaces/demo/agents/${env.agentId}/a2a`;
    expect((await fetch(`${root}/.well-known/agent-card.json`)).status).toBe(401);
    const headers = { authorization: `Bearer ${grant}` };
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const client = await a2aFactory(binding, headers).createFromUrl(`${root}/`);
      const card = await client.getAgentCard();
      expect(card.skills.map((skill) => skill.id)).toEqual(['echo']);
      expect(card.supportedInterfaces[0].url).toBe(root);
      const echoed = (await client.sendMessage({
        tenant: '',
        message: userMessage('echo', [dataPart({ text: 'granted' })]),
        configuration: undefined,
        metadata: undefined,
      })) as Message;
      expect(echoed.parts[0].content).toEqual({ $case: 'text', value: 'granted' });
      const refused = await client
        .sendMessage({
          tenant: '',
          message: userMessage('web_search', [dataPart({ query: 'x' })]),
          configuration: undefined,
          metadata: undefined,
        })
        .catch((error: unknown) => error as Error);
      expect((refused as Error).name).toBe('RequestMalformedError');
    }
  });

  it('a private card needs the agent’s credential (`agent update --a2a-card private`)', async () => {
    const url = `${base}/a2a/${env.agentId}/.well-known/agent-card.json`;
    await admin('agent', 'update', '--agent', env.agentId, '--a2a-card', 'private');
    try {
      await expect.poll(async () => (await fetch(url)).status, { timeout: 5_000 }).toBe(401);
      expect((await fetch(url, { headers: { 'x-agent-api-key': 'sk_live_wrong' } })).status).toBe(401);
      const card = await fetch(url, { headers: { 'x-agent-api-key': env.apiKey } });
      expect(card.status).toBe(200);
      expect(card.headers.get('cache-control')).toBe('private, no-store');
    } finally {
      await admin('agent', 'update', '--agent', env.agentId, '--a2a-card', 'public');
    }
    await expect.poll(async () => (await fetch(url)).status, { timeout: 5_000 }).toBe(200);
  });

  it('bad input gets the spec’s errors, never a crash: parse error, unknown method, no version, a bad message', async () => {
    const rpc = (body: string, headers: Record<string, string> = { 'a2a-version': '1.0' }) =>
      fetch(`${base}/a2a/${env.agentId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-agent-api-key': env.apiKey, ...headers },
        body,
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    expect((await rpc('{nope')).body.error.code).toBe(-32700);
    expect((await rpc('{"jsonrpc":"2.0","id":1,"method":"NoSuchMethod"}')).body.error.code).toBe(-32601);
    // A push config for no task: the task is not found (a2a-push.e2e covers push notifications).
    expect(
      (await rpc('{"jsonrpc":"2.0","id":5,"method":"CreateTaskPushNotificationConfig","params":{}}')).body.error.code,
    ).toBe(-32001);
    expect(
      (await rpc('{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{}}', { 'a2a-version': '2.0' })).body.error
        .code,
    ).toBe(-32009);
    // Without the header a request is 0.3: its methods, not 1.0's.
    expect((await rpc('{"jsonrpc":"2.0","id":4,"method":"SendMessage","params":{}}', {})).body.error.code).toBe(-32601);
    const bad = await rpc(
      '{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{}]}}}',
    );
    expect(bad.status).toBe(200);
    expect(bad.body).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32602 } });
    expect(bad.body.error.data[0]).toMatchObject({
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'INVALID_PARAMS',
    });
  });
});
