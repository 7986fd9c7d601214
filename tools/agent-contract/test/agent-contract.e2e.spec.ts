import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import type { Message } from '@a2a-js/sdk';
import { AgentPresence, CALL_ID_META_KEY } from '@mcpgw/contracts';
import { FilesApi } from '@mcpgw/files-client';
import { connectMcp, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type LoggingMessageNotification,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_SDKS, startContractAgent, type ContractAgent } from './contract-agents';

/** The inbox's ack wait for the contract agents: a killed agent's message comes back this soon. */
const ACK_WAIT_MS = 2_000;
/** The contract agents' presence heartbeat: short, so that a few arrive within a test. */
const PRESENCE_INTERVAL_MS = 300;
const HANDLE_SECRET = 'a-contract-suite-secret-of-at-least-32-chars';
const SKILLS = ['echo', 'image', 'add', 'fail', 'report', 'ask_name', 'wait', 'attachment'];

/**
 * One suite every agent SDK passes (../README.md): the SDK's contract agent,
 * started as a process with its own credentials on an authenticated NATS,
 * called through the real gateway and message service with the official MCP
 * SDK client. What the agent did is read from its marker files.
 */
describe.each(CONTRACT_SDKS)('the agent contract: $name SDK', (sdk) => {
  const agentId = `contract-${sdk.name}`;
  let env: TestStack;
  let markers: string;
  let filesDir: string;
  let creds: string;
  let agent: ContractAgent;
  let mcp: McpConnection;
  let apiKey: string;

  const start = (extra: Record<string, string> = {}) =>
    startContractAgent(sdk, {
      AGENT_ID: agentId,
      NATS_URL: env.nats!.url,
      NATS_CREDS: creds,
      BUS_PREFIX: env.stack.settings.busPrefix,
      INBOX_ACK_WAIT_MS: String(ACK_WAIT_MS),
      PRESENCE_INTERVAL_MS: String(PRESENCE_INTERVAL_MS),
      CONTRACT_MARKERS: markers,
      ...extra,
    });
  const marker = (name: string) => {
    const path = join(markers, name);
    return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  };
  const runsOf = (key: string) => (marker(`started-${key}`) ?? '').split('\n').filter(Boolean);
  const textOf = (result: unknown) => (result as { content: { text?: string }[] }).content[0]?.text;

  beforeAll(async () => {
    markers = mkdtempSync(join(tmpdir(), `mcpgw-contract-${sdk.name}-`));
    filesDir = mkdtempSync(join(tmpdir(), `mcpgw-contract-files-`));
    env = await startTestStack({
      pods: 0,
      podEnv: { AGENT_ID: agentId },
      gatewayEnv: { CONVERSATION_HANDLE_SECRET: HANDLE_SECRET, FILES_STORAGE: 'local', FILES_DIR: filesDir },
    });
    creds = await env.nats!.credsFile({ role: 'agent', agentId });
    agent = await start();
    apiKey = env.apiKey;
    mcp = await connectMcp(env.mcpUrl(0, agentId), apiKey);
  }, 180_000);

  afterAll(async () => {
    await mcp?.close();
    await agent?.stop();
    await env?.stop();
    rmSync(markers, { recursive: true, force: true });
    rmSync(filesDir, { recursive: true, force: true });
  });

  it('registers its skills, with their schemas', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...SKILLS].sort());
    const add = tools.find((t) => t.name === 'add')!;
    expect(add.inputSchema).toMatchObject({ required: ['a', 'b'] });
    expect(add.outputSchema).toMatchObject({ properties: { sum: { type: 'number' } } });
  });

  it('answers with text, image, structured and error results', async () => {
    expect(await mcp.client.callTool({ name: 'echo', arguments: { text: 'héllo' } })).toMatchObject({
      content: [{ type: 'text', text: 'héllo' }],
    });
    const image = await mcp.client.callTool({ name: 'image', arguments: {} });
    expect(image.content).toMatchObject([
      { type: 'image', mimeType: 'image/png' },
      { type: 'text', text: 'a pixel' },
    ]);
    expect(
      Buffer.from((image.content as { data: string }[])[0].data, 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    const added = await mcp.client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
    expect(added).toMatchObject({ content: [{ type: 'text', text: '42' }], structuredContent: { sum: 42 } });
    expect(added.isError).toBeFalsy();
    const failed = await mcp.client.callTool({ name: 'fail', arguments: {} });
    expect(failed).toMatchObject({ isError: true, content: [{ type: 'text', text: 'this tool fails on purpose' }] });
  });

  it("relays the skill's progress and log lines to the MCP client", async () => {
    const lines: LoggingMessageNotification['params'][] = [];
    mcp.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void lines.push(n.params));
    await mcp.client.setLoggingLevel('info');
    const progress: Progress[] = [];
    const result = await mcp.client.callTool({ name: 'report', arguments: { steps: 3 } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    expect(textOf(result)).toBe('reported 3');
    expect(progress).toEqual([1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step}` })));
    await expect.poll(() => lines.length).toBe(3);
    // The skill logs the call id it was given: the one the client's result names.
    const callId = (result._meta as Record<string, unknown>)[CALL_ID_META_KEY];
    expect(callId).toMatch(/^call_[0-9a-f]{32}$/);
    expect(lines.map((l) => [l.level, l.data])).toEqual([1, 2, 3].map((step) => ['info', { step, call_id: callId }]));
  });

  it('asks the client and gets its answer: a 2025-11-25 client (elicitation request on the stream)', async () => {
    const client = new Client({ name: 'contract-asker', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      expect(request.params.message).toBe('Your name?');
      return { action: 'accept', content: { name: 'Ada' } };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(env.mcpUrl(0, agentId)), {
        requestInit: { headers: { 'X-Agent-API-Key': apiKey } },
      }),
    );
    try {
      expect(textOf(await client.callTool({ name: 'ask_name', arguments: {} }))).toBe('hello Ada');
    } finally {
      await client.close();
    }
  });

  it('asks the client and gets its answer: a 2026-07-28 client (input-required result, then the retry)', async () => {
    const call = async (extra: Record<string, unknown>) => {
      const response = await fetch(env.mcpUrl(0, agentId), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-agent-api-key': apiKey,
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'ask_name',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: randomUUID(),
          method: 'tools/call',
          params: {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
              'io.modelcontextprotocol/clientInfo': { name: 'contract-mrtr', version: '1.0.0' },
            },
            name: 'ask_name',
            arguments: {},
            ...extra,
          },
        }),
      });
      return (await response.json()) as { result: Record<string, unknown> & { requestState?: string } };
    };
    const first = await call({});
    expect(first.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { name: { method: 'elicitation/create', params: { message: 'Your name?' } } },
    });
    const done = await call({
      inputResponses: { name: { action: 'accept', content: { name: 'Grace' } } },
      requestState: first.result.requestState,
    });
    expect(done.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'hello Grace' }] });
  });

  it("a client's cancellation reaches the skill", async () => {
    const key = `cancel-${sdk.name}`;
    const abort = new AbortController();
    const call = mcp.client
      .callTool({ name: 'wait', arguments: { key, ms: 30_000 } }, undefined, { signal: abort.signal })
      .catch((e: Error) => e);
    await expect.poll(() => runsOf(key).length, { timeout: 10_000 }).toBe(1);
    abort.abort('the user gave up');
    await call;
    await expect.poll(() => marker(`stopped-${key}`), { timeout: 10_000 }).toBe('cancelled');
  });

  it("the call's deadline reaches the skill", async () => {
    const key = `deadline-${sdk.name}`;
    // A session of its own: one that watches its calls (a log level set, progress asked) lets the agent work on past the deadline.
    const plain = await connectMcp(env.mcpUrl(0, agentId), apiKey);
    try {
      const error = await plain.client
        .callTool({ name: 'wait', arguments: { key, ms: 30_000 }, _meta: { 'mcpgw/timeoutMs': 1_000 } })
        .catch((e: { code?: number }) => e);
      expect((error as { code?: number }).code).toBe(-32003);
      await expect.poll(() => marker(`stopped-${key}`), { timeout: 10_000 }).toBe('deadline');
    } finally {
      await plain.close();
    }
  });

  it('downloads an attachment through its signed URL', async () => {
    const bytes = randomBytes(70_000);
    const files = new FilesApi({ baseUrl: env.gatewayUrls[0], apiKey });
    const fileId = await files.upload(bytes, { filename: 'noise.bin', contentType: 'application/octet-stream' });
    const result = await mcp.client.callTool({
      name: 'attachment',
      arguments: { attachments: [{ file_id: fileId, filename: 'noise.bin' }] },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      files: [{ name: 'noise.bin', size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }],
    });
  });

  it('an agent killed with kill -9 mid-skill: the call completes once another instance runs it', async () => {
    const key = `killed-${sdk.name}`;
    const call = mcp.client.callTool({ name: 'wait', arguments: { key, ms: 1_500 } });
    await expect.poll(() => runsOf(key).length, { timeout: 10_000 }).toBe(1);
    const killed = agent;
    await killed.kill('SIGKILL');
    agent = await start();
    const result = await call;
    expect(textOf(result)).toBe(`waited 1500 in ${agent.pid}`);
    expect(runsOf(key)).toEqual([String(killed.pid), String(agent.pid)]);
  });

  it('a reply that cannot be stored yet is posted again, without running the skill again', async () => {
    const key = `outage-${sdk.name}`;
    // Straight to the message service (its REST mirror), which waits for the reply as the gateway would.
    let serviceUrl = env.messageServiceUrl;
    const post = (path: string, body: unknown) =>
      fetch(`${serviceUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${env.stack.messageServiceToken}` },
        body: JSON.stringify(body),
      }).then((r) => r.json());
    const channel = await post('/channels', { agent_id: agentId });
    const message = {
      type: 'chat_message',
      id: randomUUID(),
      channel_id: channel.id,
      agent_id: agentId,
      sender: { kind: 'user', id: 'contract-suite' },
      created_at: new Date().toISOString(),
      tool_call: { name: 'wait', arguments: { key, ms: 1_000 } },
    };
    await post(`/channels/${channel.id}/messages`, message);
    await expect.poll(() => runsOf(key).length, { timeout: 10_000 }).toBe(1);
    // The only replica dies while the skill runs: the reply the agent sends straight to it is lost.
    const replica = env.stack.processes.find((p) => p.name.startsWith('message-service') && p.running)!;
    await replica.kill();
    // Past the ack wait the message comes back; the agent holds it and retries storing its reply.
    await delay(2 * ACK_WAIT_MS);
    serviceUrl = (await env.stack.startMessageService()).url;
    const waited = await post(`/channels/${channel.id}/wait`, { message_id: message.id, timeout_ms: 20_000 });
    expect(waited).toMatchObject({
      status: 'replied',
      reply: { content: [{ type: 'text', text: `waited 1000 in ${agent.pid}` }] },
    });
    expect(runsOf(key)).toHaveLength(1);
  });

  it("another agent's credentials are refused at start", async () => {
    const stranger = await env.nats!.credsFile({ role: 'agent', agentId: `${agentId}-other` });
    const imposter = await startContractAgent(
      sdk,
      {
        AGENT_ID: agentId,
        NATS_URL: env.nats!.url,
        NATS_CREDS: stranger,
        BUS_PREFIX: env.stack.settings.busPrefix,
        CONTRACT_MARKERS: markers,
      },
      { expectReady: false },
    );
    expect(await imposter.exited).not.toBe(0);
    expect(imposter.stderr()).toContain('NATS_CREDS');
  });

  it('answers a conversational message (an A2A message that names no skill) with its message handler', async () => {
    const fetchImpl: typeof fetch = (input, init) =>
      fetch(input, {
        ...init,
        headers: { ...Object.fromEntries(new Headers(init?.headers)), 'x-agent-api-key': apiKey },
      });
    const client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    ).createFromUrl(`${env.gatewayUrls[0]}/a2a/${agentId}/`);
    const part = (content: Message['parts'][number]['content']) => ({
      content,
      metadata: undefined,
      filename: '',
      mediaType: '',
    });
    const say = async (contextId: string, parts: Message['parts']) => {
      const message = { messageId: randomUUID(), contextId, taskId: '', role: 1, parts, metadata: undefined };
      const params = { tenant: '', configuration: undefined, metadata: undefined };
      const answer = (await client.sendMessage({
        ...params,
        message: { ...message, extensions: [], referenceTaskIds: [] },
      })) as Message;
      return { contextId: answer.contextId, text: answer.parts.map((p) => p.content?.value).join('') };
    };
    const first = await say('', [part({ $case: 'text', value: 'hello' }), part({ $case: 'data', value: { n: 1 } })]);
    expect(first.text).toBe('heard hello {"n":1} (1 in this conversation)');
    // The same contextId is the same conversation: the handler's history holds the first message.
    const second = await say(first.contextId, [part({ $case: 'text', value: 'again' })]);
    expect(second.text).toBe('heard again (2 in this conversation)');
  });

  /** The presence heartbeats of the agent heard from now on (docs/asyncapi.yaml, publishPresence). */
  const hearPresence = async () => {
    const nc = await env.connectNats();
    const heard: { pod_id: string; state: string; interval_ms: number }[] = [];
    const sub = nc.subscribe(AgentPresence.subject(env.stack.settings.busPrefix, agentId), {
      callback: (_error, msg) => heard.push(msg.json()),
    });
    await nc.flush();
    return { heard, close: () => (sub.unsubscribe(), nc.close()) };
  };

  it('says its pod is up every PRESENCE_INTERVAL_MS, naming the pod', async () => {
    const presence = await hearPresence();
    try {
      await expect.poll(() => presence.heard.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
      for (const beat of presence.heard) {
        expect(beat).toEqual({
          pod_id: expect.stringMatching(new RegExp(`-${agent.pid}$`)),
          state: 'up',
          interval_ms: PRESENCE_INTERVAL_MS,
        });
      }
    } finally {
      await presence.close();
    }
  });

  it('drains on SIGTERM and exits 0', async () => {
    const presence = await hearPresence();
    const key = `drain-${sdk.name}`;
    const call = mcp.client.callTool({ name: 'wait', arguments: { key, ms: 800 } });
    await expect.poll(() => runsOf(key).length, { timeout: 10_000 }).toBe(1);
    const draining = agent;
    const exited = draining.kill('SIGTERM');
    expect(textOf(await call)).toBe(`waited 800 in ${draining.pid}`);
    expect(await exited).toBe(0);
    // It said it was leaving (the gateway shows it offline at once), and nothing after.
    const own = presence.heard.filter((beat) => beat.pod_id.endsWith(`-${draining.pid}`));
    await presence.close();
    expect(own.at(-1)).toMatchObject({ state: 'leaving', interval_ms: PRESENCE_INTERVAL_MS });
    expect(own.filter((beat) => beat.state === 'leaving')).toHaveLength(1);
    agent = await start();
  });
});
