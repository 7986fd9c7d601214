import { createAgent, defineSkill } from '@mcpgw/agent-sdk';
import { connectMcp, startTestStack, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const AGENT = 'sdk-registration';

const echo = defineSkill<{ text: string }>({
  name: 'echo',
  description: 'Returns its text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  run: async ({ text }) => text,
});

/** `start()` resolves once the registry has the catalogue, and says why when it refuses it. */
describe('agent SDK registration', () => {
  let env: TestStack;

  beforeAll(async () => {
    env = await startTestStack({ pods: 0, podEnv: { AGENT_ID: AGENT } });
  }, 180_000);

  afterAll(async () => {
    await env?.stop();
  });

  const agentWith = async (options: Partial<Parameters<typeof createAgent>[0]>) =>
    createAgent({
      agentId: AGENT,
      skills: [echo],
      natsUrl: env.nats!.url,
      natsCreds: await env.nats!.credsFile({ role: 'agent', agentId: AGENT }),
      busPrefix: env.stack.settings.busPrefix,
      handleSignals: false,
      env: {},
      ...options,
    });

  it('a registration the gateway refuses fails start() with its reason, and leaves nothing running', async () => {
    const elsewhere = await agentWith({ workspaceId: 'elsewhere' });
    await expect(elsewhere.start()).rejects.toThrow(/registration refused: .*belongs to workspace demo/);
    expect(elsewhere.inboxNotReady()).toBe('not consuming');
    const badSchema = await agentWith({
      skills: [defineSkill({ name: 'bad', description: 'x', inputSchema: { type: 'nonsense' }, run: async () => '' })],
    });
    await expect(badSchema.start()).rejects.toThrow(/registration refused: skill bad: invalid input_schema/);
  });

  it('a registration the gateway takes makes the skills callable, and update() registers a changed catalogue', async () => {
    const agent = await agentWith({});
    await agent.start();
    const mcp = await connectMcp(env.mcpUrl(0, AGENT), env.apiKey);
    try {
      expect((await mcp.client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
      const shout = defineSkill<{ text: string }>({
        name: 'shout',
        description: 'Returns its text in capitals',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        run: async ({ text }) => text.toUpperCase(),
      });
      await agent.update({ skills: [echo, shout] });
      await expect
        .poll(async () => (await mcp.client.listTools()).tools.map((t) => t.name).sort(), { timeout: 10_000 })
        .toEqual(['echo', 'shout']);
      expect(await mcp.client.callTool({ name: 'shout', arguments: { text: 'hi' } })).toMatchObject({
        content: [{ type: 'text', text: 'HI' }],
      });
    } finally {
      await mcp.close();
      await agent.stop();
    }
  });

  it('one process hosts two agents, each with its own credentials, each answering its own calls', async () => {
    const second = `${AGENT}-2`;
    await env.stack.admin('agent', 'create', '--id', second, '--workspace', 'demo');
    const key = await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', second);
    const whoami = () =>
      defineSkill({
        name: 'whoami',
        description: 'Says which agent answers',
        inputSchema: { type: 'object', properties: {} },
        run: async (_args, ctx) => ctx.agent.agentId,
      });
    const first = await agentWith({ skills: [whoami()] });
    const other = await agentWith({
      agentId: second,
      skills: [whoami()],
      natsCreds: await env.nats!.credsFile({ role: 'agent', agentId: second }),
    });
    await Promise.all([first.start(), other.start()]);
    const clients = [
      await connectMcp(env.mcpUrl(0, AGENT), env.apiKey),
      await connectMcp(env.mcpUrl(0, second), key.key),
    ];
    try {
      for (const [client, agentId] of [
        [clients[0], AGENT],
        [clients[1], second],
      ] as const) {
        expect(await client.client.callTool({ name: 'whoami', arguments: {} })).toMatchObject({
          content: [{ type: 'text', text: agentId }],
        });
      }
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await Promise.all([first.stop(), other.stop()]);
    }
  });
});
