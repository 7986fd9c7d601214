import type { Client } from '@a2a-js/sdk/client';
import type { Message, Task } from '@a2a-js/sdk';
import { createAgent, defineSkill, type Agent } from '@mcpgw/agent-sdk';
import { decodeJson, encodeJson } from '@mcpgw/bus';
import { BusPattern } from '@mcpgw/contracts';
import {
  a2aClient,
  type Binding,
  dataPart,
  startTestStack,
  type TestStack,
  textPart,
  userMessage,
} from '@mcpgw/devstack';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const QUIET = 'a2a-quiet';
/** The card extension that says an agent converses (apps/gateway/src/a2a/README.md, "The card"). */
const CONVERSATION = 'urn:mcpgw:a2a:conversation:v1';
const COMPLETED = 3; // TASK_STATE_COMPLETED

/**
 * Conversational messages on the A2A surface (apps/gateway/src/a2a/README.md,
 * "A message without a skill"): a message that names no skill reaches the
 * agent's message handler (the mock pod's echoes it with the conversation's
 * message count), one contextId is one conversation, and an agent that
 * registered no handler is UnsupportedOperationError without being asked.
 * Through the official `@a2a-js/sdk` 1.3.0 client, on both bindings.
 */
describe('A2A 1.0: conversational messages, with the official SDK client', () => {
  let env: TestStack;
  let base: string;
  let quiet: Agent;
  let quietKey: string;
  let quietDeliveries = 0;

  const clientOf = (binding: Binding, agentId = env.agentId, apiKey = env.apiKey): Promise<Client> =>
    a2aClient(`${base}/a2a/${agentId}/`, binding, apiKey);
  /** A user message that names no skill. */
  const said = (parts: Message['parts'], contextId = '', messageId = randomUUID()): Message =>
    userMessage(undefined, parts, { contextId, messageId });
  const send = async (client: Client, message: Message) =>
    (await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined })) as Message;
  const textOf = (answer: Message) =>
    answer.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');

  beforeAll(async () => {
    env = await startTestStack();
    base = env.gatewayUrls[0];
    // An agent with a skill and no message handler, served by the SDK in this process.
    quietKey = (await env.addAgent(QUIET)).apiKey;
    quiet = createAgent({
      agentId: QUIET,
      skills: [
        defineSkill<{ text: string }>({
          name: 'shout',
          description: 'Upper-cases its text',
          inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
          run: async (args) => args.text.toUpperCase(),
        }),
      ],
      natsUrl: env.nats!.url,
      natsCreds: await env.nats!.credsFile({ role: 'agent', agentId: QUIET }),
      busPrefix: env.stack.settings.busPrefix,
      handleSignals: false,
      onDelivery: () => void quietDeliveries++,
      env: {},
    });
    await quiet.start();
  }, 180_000);

  afterAll(async () => {
    await quiet?.stop();
    await env?.stop();
  });

  for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
    it(`over ${binding}: a message without a skill gets the handler's answer, as the agent message`, async () => {
      const client = await clientOf(binding);
      const answer = await send(client, said([textPart('hello'), textPart('there'), dataPart({ mood: 'fine' })]));
      expect(answer.role).toBe(2); // ROLE_AGENT
      // Text parts joined by newlines become the chat_message's text, the data part its data.
      expect(textOf(answer)).toBe('you said: hello\nthere {"mood":"fine"} (message 1 of this conversation)');
      // One call id, as for a skill; no skill named.
      expect(answer.messageId).toMatch(/^call_[0-9a-f]{32}$/);
      expect(answer.metadata).toEqual({ 'mcpgw/callId': answer.messageId });
      expect(answer.contextId).not.toBe('');
    });
  }

  it('messages in one contextId share the conversation; another contextId is another one', async () => {
    const client = await clientOf('JSONRPC');
    const first = await send(client, said([textPart('one')]));
    expect(textOf(first)).toBe('you said: one (message 1 of this conversation)');
    const second = await send(client, said([textPart('two')], first.contextId));
    expect(textOf(second)).toBe('you said: two (message 2 of this conversation)');
    expect(second.contextId).toBe(first.contextId);
    // A skill called in the same context shares its channel too (`recall` sees the two turns).
    const recall = await client.sendMessage({
      tenant: '',
      message: { ...said([dataPart({})], first.contextId), metadata: { skill: 'recall' } },
      configuration: undefined,
      metadata: undefined,
    });
    const turns = (recall as Message).parts.find((part) => part.content?.$case === 'data')?.content;
    expect(turns).toMatchObject({ value: { turns: [{ text: 'one' }, { text: 'two' }] } });
    const elsewhere = await send(client, said([textPart('three')]));
    expect(textOf(elsewhere)).toBe('you said: three (message 1 of this conversation)');
    expect(elsewhere.contextId).not.toBe(first.contextId);
  });

  it('the messageId is the idempotency key: the same message again gets the stored answer, not a new turn', async () => {
    const client = await clientOf('HTTP+JSON');
    const message = said([textPart('once')]);
    const first = await send(client, message);
    const again = await send(client, message);
    expect(again).toEqual(first);
    const next = await send(client, said([textPart('next')], first.contextId));
    expect(textOf(next)).toBe('you said: next (message 2 of this conversation)');
    // The same messageId with other text is refused, as for a skill with other arguments.
    const changed = await send(client, { ...message, parts: [textPart('twice')] }).catch((e: Error) => e);
    expect((changed as Error).name).toBe('RequestMalformedError');
  });

  it('with returnImmediately it is a task, completed with the answer as its artifact', async () => {
    const client = await clientOf('JSONRPC');
    const task = (await client.sendMessage({
      tenant: '',
      message: said([textPart('later')]),
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        returnImmediately: true,
      },
      metadata: undefined,
    })) as Task;
    expect(task.id).toMatch(/^call_[0-9a-f]{32}$/);
    await expect
      .poll(async () => (await client.getTask({ tenant: '', id: task.id })).status?.state, { timeout: 10_000 })
      .toBe(COMPLETED);
    const done = await client.getTask({ tenant: '', id: task.id });
    expect(done.artifacts[0].parts[0].content).toEqual({
      $case: 'text',
      value: 'you said: later (message 1 of this conversation)',
    });
    expect(done.metadata).not.toHaveProperty('skill');
  });

  it('the card says whether the agent converses: the mock pod (a handler) does, an agent without one does not', async () => {
    const extensionsOf = async (client: Client) =>
      ((await client.getAgentCard()).capabilities?.extensions ?? []).filter((e) => e.uri === CONVERSATION);
    const [converses] = await extensionsOf(await clientOf('JSONRPC'));
    expect(converses).toMatchObject({ uri: CONVERSATION, required: false });
    expect(converses.description).toMatch(/names no skill/);
    expect(await extensionsOf(await clientOf('JSONRPC', QUIET, quietKey))).toEqual([]);
    // The card is public: the same without a credential, as a client discovers it.
    const card = await (await fetch(`${base}/a2a/${QUIET}/.well-known/agent-card.json`)).json();
    expect(card.capabilities.extensions.map((e: { uri: string }) => e.uri)).not.toContain(CONVERSATION);
    expect(card.description).not.toMatch(/message handler/);
  });

  for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
    it(`over ${binding}: an agent without a handler is UnsupportedOperationError, and is never asked`, async () => {
      const client = await clientOf(binding, QUIET, quietKey);
      const before = quietDeliveries;
      const refused = await send(client, said([textPart('anyone there?')])).catch((e: Error) => e);
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).name).toBe('UnsupportedOperationError');
      // Its skill answers all the same.
      const shouted = await client.sendMessage({
        tenant: '',
        message: { ...said([textPart('hi')]), metadata: { skill: 'shout' } },
        configuration: undefined,
        metadata: undefined,
      });
      expect(textOf(shouted as Message)).toBe('HI');
      // The skill's message was delivered; the conversational one never was.
      expect(quietDeliveries).toBe(before + 1);
    });
  }

  // A grant names the skills its task may call: a conversation would reach the agent outside all of them.
  it('a RuntimeGrant may not converse, even with an agent that has a handler: UnsupportedOperationError', async () => {
    const { grant } = await env.stack.admin<{ grant: string }>(
      'grant',
      'mint',
      '--workspace',
      'demo',
      '--agent',
      env.agentId,
      '--task',
      'a2a-conversation-task',
      '--tools',
      'echo',
    );
    const client = await a2aClient(`${base}/workspaces/demo/agents/${env.agentId}/a2a/`, 'JSONRPC', {
      authorization: `Bearer ${grant}`,
    });
    // Its card does not offer what it may not do.
    const card = await client.getAgentCard();
    expect(card.capabilities?.extensions.map((e) => e.uri)).not.toContain(CONVERSATION);
    const refused = await send(client, said([textPart('let me in')])).catch((e: Error) => e);
    expect((refused as Error).name).toBe('UnsupportedOperationError');
    expect((refused as Error).message).toMatch(/grant calls only the skills it names/);
  });

  // Defence in depth: a conversational message posted on the bus past the gateway's check (as another sender could).
  it('the SDK answers a conversational message without a handler with an error reply, and goes on serving', async () => {
    const nc = await env.connectNats({ role: 'gateway' });
    try {
      const message = {
        type: 'chat_message',
        id: randomUUID(),
        agent_id: QUIET,
        sender: { kind: 'mcp_client', id: 'tester' },
        created_at: new Date().toISOString(),
        text: 'past the gateway',
      };
      const answer = await nc.request(
        `${env.stack.settings.busPrefix}.${BusPattern.PostAndWait}`,
        encodeJson({ envelope: message, timeout_ms: 10_000 }),
        { timeout: 15_000 },
      );
      const frame = decodeJson(answer.data) as { ok: boolean; data: { result: { status: string; reply: object } } };
      expect(frame.data.result).toMatchObject({
        status: 'replied',
        reply: {
          is_error: true,
          content: [{ type: 'text', text: 'this agent answers no conversational messages: name one of its skills' }],
        },
      });
    } finally {
      await nc.close();
    }
    const client = await clientOf('JSONRPC', QUIET, quietKey);
    const shouted = await client.sendMessage({
      tenant: '',
      message: { ...said([textPart('still here')]), metadata: { skill: 'shout' } },
      configuration: undefined,
      metadata: undefined,
    });
    expect(textOf(shouted as Message)).toBe('STILL HERE');
  });

  it('the wire error is -32004 on JSON-RPC', async () => {
    const response = await fetch(`${base}/a2a/${QUIET}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-agent-api-key': quietKey },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      }),
    });
    expect(response.status).toBe(200);
    expect((await response.json()).error).toMatchObject({ code: -32004 });
  });
});
