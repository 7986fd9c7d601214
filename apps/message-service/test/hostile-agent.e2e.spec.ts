import { ensureAgentConsumer, inboxPrefix, type BusIdentity } from '@mcpgw/bus';
import { AgentInbox, BusPattern, ReplyHeaders, subject, type AgentReply, type ChatMessage } from '@mcpgw/contracts';
import { parsePrometheus, startTestStack, toolCallMessage, type TestStack } from '@mcpgw/devstack';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AckPolicy, connect, credsAuthenticator, headers, type JsMsg, type NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A hostile agent, on a nats-server with auth on, holding only its own
 * credentials: it tries to make the services act for it (answer a request onto
 * the JetStream API or the system account, ack with a header that breaks the
 * protocol line or names another subject, flood the gateways with notices).
 * After each attempt: the inbox stream still holds the pending messages it
 * held, no service's NATS connection was closed (the system account's CONNZ),
 * a call in flight through the gateway is answered, and the refusal is counted
 * in `mcpgw_bus_dropped_total`.
 */
describe('a hostile agent', () => {
  let env: TestStack;
  let prefix: string;
  let stream: string;
  let janitor: NatsConnection;
  let system: NatsConnection;
  let hostile: NatsConnection;
  let mcp: Client;
  const opened: NatsConnection[] = [];
  const H = 'hostile-agent';
  const LONELY = 'lonely-agent';
  const PENDING = 3;

  const connectAs = async (identity: BusIdentity) => {
    const nc = await env.nats!.connectAs(identity);
    opened.push(nc);
    return nc;
  };

  /** The NATS connection id of each app (by connection name), from the system account's CONNZ. */
  const serviceConnections = async (): Promise<Record<string, number>> => {
    const answer = await system.request(
      '$SYS.REQ.SERVER.PING.CONNZ',
      new TextEncoder().encode(JSON.stringify({ acc: env.nats!.authority.account, limit: 1024 })),
      { timeout: 2_000 },
    );
    const connz = (answer.json() as { data: { connections: { cid: number; name?: string }[] } }).data;
    const apps = connz.connections.filter((c) => /^(gateway|message-service)-/.test(c.name ?? ''));
    return Object.fromEntries(apps.map((c) => [c.name!, c.cid]));
  };

  /** Messages in the stream for the agent nobody serves: they must stay until a pod takes them. */
  const lonelyPending = async () => {
    const jsm = await janitor.jetstreamManager();
    const info = await jsm.streams.info(stream, { subjects_filter: AgentInbox.subject(prefix, LONELY) });
    return info.state.subjects?.[AgentInbox.subject(prefix, LONELY)] ?? 0;
  };

  const dropped = async (app: 'gateway' | 'message-service', family: string) => {
    const url = app === 'gateway' ? env.stack.managementUrlOf(env.gatewayUrls[0]) : messageServiceManagement();
    const text = await (await fetch(`${url}/metrics`)).text();
    return parsePrometheus(text)
      .filter((s) => s.name === 'mcpgw_bus_dropped_total' && s.labels.family === family)
      .reduce((sum, s) => sum + s.value, 0);
  };
  const messageServiceManagement = () => env.stack.managementUrlOf(env.messageServiceUrl);

  /** A call through the gateway that is still running while the attack happens. */
  const callInFlight = () => mcp.callTool({ name: 'sleep', arguments: { ms: 1_500 } }, undefined, { timeout: 20_000 });

  /**
   * Run `attack` with a call in flight, then check that nothing it aimed at moved:
   * the pending messages, the services' connections, the call's answer.
   */
  const survives = async (attack: () => Promise<void>) => {
    const connections = await serviceConnections();
    expect(Object.keys(connections).length).toBeGreaterThanOrEqual(2);
    const call = callInFlight();
    await attack();
    await hostile.flush();
    const answered = await call;
    expect(answered.isError).toBeFalsy();
    expect(await lonelyPending()).toBe(PENDING);
    expect(await serviceConnections()).toEqual(connections);
    expect(hostile.isClosed()).toBe(false);
  };

  /** A chat message for an agent, posted by "the gateway" (the test, asking as the gateway would). */
  const chat = (agentId: string, channelId: string): ChatMessage =>
    toolCallMessage(channelId, agentId, 'anything', {}, { text: 'hello' });

  const replyTo = (message: ChatMessage): AgentReply => ({
    type: 'agent_reply',
    id: randomUUID(),
    channel_id: message.channel_id,
    agent_id: message.agent_id,
    in_reply_to: message.id,
    created_at: new Date().toISOString(),
    content: [{ type: 'text', text: 'done' }],
  });

  beforeAll(async () => {
    env = await startTestStack({ auth: true });
    prefix = env.stack.settings.busPrefix;
    stream = AgentInbox.streamName(prefix);
    janitor = await env.connectNats();
    opened.push(janitor);
    system = await connect({
      servers: env.nats!.url,
      authenticator: credsAuthenticator(readFileSync(env.nats!.adminEnv.NATS_SYSTEM_CREDS)),
    });
    opened.push(system);
    hostile = await connectAs({ role: 'agent', agentId: H });
    // Work waiting for an agent with no pod up: it must still be there after every attack.
    const js = janitor.jetstream();
    for (let i = 0; i < PENDING; i++) {
      await js.publish(AgentInbox.subject(prefix, LONELY), new TextEncoder().encode(JSON.stringify({ n: i })));
    }
    mcp = new Client({ name: 'bystander', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(env.mcpUrl()), {
        requestInit: { headers: { 'X-Agent-API-Key': env.apiKey } },
      }),
    );
  }, 60_000);

  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
    await Promise.all(opened.map((nc) => nc.close().catch(() => undefined)));
    await env?.stop();
  });

  it('the stream refuses a purge and message deletes even from a user allowed the whole JetStream API', async () => {
    const jsm = await janitor.jetstreamManager();
    await expect(jsm.streams.purge(stream)).rejects.toThrow(/purge not permitted/);
    await expect(jsm.streams.deleteMessage(stream, 1)).rejects.toThrow(/delete not permitted/);
    expect(await lonelyPending()).toBe(PENDING);
  });

  it('the message service says so when the stream is purged or a foreign consumer appears', async () => {
    const tampering = async (kind: string) => {
      const text = await (await fetch(`${messageServiceManagement()}/metrics`)).text();
      return (
        parsePrometheus(text).find((s) => s.name === 'mcpgw_inbox_tampering_total' && s.labels.kind === kind)?.value ??
        0
      );
    };
    const jsm = await janitor.jetstreamManager();
    const purges = await tampering('purge');
    await jsm.streams.purge(stream).catch(() => undefined); // refused by the stream, but attempted
    await expect.poll(() => tampering('purge'), { timeout: 5_000 }).toBe(purges + 1);
    // A consumer on the lonely agent's inbox under another name: it could take that agent's calls.
    await jsm.consumers.add(stream, {
      durable_name: 'reads_everything',
      filter_subject: AgentInbox.subject(prefix, LONELY),
      ack_policy: AckPolicy.Explicit,
    });
    await expect.poll(() => tampering('foreign_consumer'), { timeout: 5_000 }).toBe(1);
    await jsm.consumers.delete(stream, 'reads_everything');
    // An agent's own consumer is not reported (the hostile agent makes its own below).
    expect(await lonelyPending()).toBe(PENDING);
  });

  it.each([
    ['the message service', BusPattern.AgentHistory, 'message-service'],
    ['the message service', BusPattern.StoreReply, 'message-service'],
    ['the message service', BusPattern.IsAnswered, 'message-service'],
    ['the gateway', BusPattern.RegisterAgent, 'gateway'],
  ] as const)(
    'cannot make %s answer its request (%s) onto the JetStream API or the system account',
    async (_who, operation, app) => {
      const to = subject(prefix, operation.replace('*', H));
      const targets = [
        `$JS.API.STREAM.PURGE.${stream}`,
        `$JS.API.STREAM.DELETE.${stream}`,
        `$JS.API.CONSUMER.DELETE.${stream}.${AgentInbox.consumerName(env.agentId)}`,
        '$SYS.REQ.SERVER.PING',
        `$SYS.REQ.ACCOUNT.${env.nats!.authority.account}.CLAIMS.LOOKUP`,
        // Another identity's reply inbox: the gateway's answers are not the agent's to write.
        `${inboxPrefix(prefix, { role: 'gateway' })}.forged.1`,
      ];
      const before = await dropped(app, operation);
      await survives(async () => {
        for (const reply of targets) hostile.publish(to, new TextEncoder().encode('{}'), { reply });
      });
      await expect.poll(() => dropped(app, operation), { timeout: 5_000 }).toBe(before + targets.length);
      const consumers = await (
        await janitor.jetstreamManager()
      ).consumers.info(stream, AgentInbox.consumerName(env.agentId));
      expect(consumers.name).toBe(AgentInbox.consumerName(env.agentId));
    },
  );

  it('is still answered in its own inbox (the control refuses foreign reply subjects, not the agent)', async () => {
    const answer = await hostile.request(
      subject(prefix, BusPattern.RegisterAgent.replace('*', H)),
      new TextEncoder().encode(
        JSON.stringify({
          workspace_id: 'demo',
          agent_id: H,
          pod_id: 'h1',
          skills: [{ name: 'noop', description: 'noop', input_schema: { type: 'object' } }],
        }),
      ),
      { timeout: 5_000 },
    );
    expect(answer.json()).toEqual({ ok: true, data: { registered: 1 } });
  });

  it("cannot learn whether another agent's messages are answered", async () => {
    const gateway = await env.connectNats();
    opened.push(gateway);
    const request = (nc: NatsConnection, to: string, body: unknown) =>
      nc.request(subject(prefix, to), new TextEncoder().encode(JSON.stringify(body)), { timeout: 5_000 });
    const channel = (await request(gateway, BusPattern.CreateChannel, { agent_id: env.agentId })).json() as {
      data: { id: string };
    };
    const asked = { channel_id: channel.data.id, message_id: randomUUID() };
    const answer = await request(hostile, BusPattern.IsAnswered.replace('*', H), asked);
    expect(answer.json()).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it('cannot inject protocol arguments or another subject through the ack header of its reply', async () => {
    // The test, as the gateway, posts a message for the hostile agent and waits for its reply.
    const gateway = await env.connectNats();
    opened.push(gateway);
    const ask = async (body: unknown, timeoutMs = 10_000) =>
      (
        await gateway.request(subject(prefix, BusPattern.PostAndWait), new TextEncoder().encode(JSON.stringify(body)), {
          timeout: timeoutMs,
        })
      ).json() as { ok: boolean; data?: { result: { status: string } } };
    const channel = (
      (
        await gateway.request(
          subject(prefix, BusPattern.CreateChannel),
          new TextEncoder().encode(JSON.stringify({ agent_id: H })),
        )
      ).json() as { data: { id: string } }
    ).data.id;

    // The hostile agent pulls its own message as a pod would: the replica's replies subject and the ack subject.
    const durable = await ensureAgentConsumer(await hostile.jetstreamManager(), prefix, H, {
      ackWaitMs: 30_000,
      maxDeliver: 5,
    });
    const consumer = await hostile.jetstream().consumers.get(stream, durable);
    const pull = async (): Promise<JsMsg> => {
      const batch = await consumer.fetch({ max_messages: 1, expires: 5_000 });
      for await (const msg of batch) return msg;
      throw new Error('nothing delivered to the hostile agent');
    };
    const family = 'ms.replicas.*.replies.*';

    const attempt = async (ack: (real: string) => string) => {
      const message = chat(H, channel);
      const waiting = ask({ envelope: message, timeout_ms: 1_500 });
      const msg = await pull();
      const replica = msg.headers!.get(ReplyHeaders.replyTo);
      const real = (msg as unknown as { reply: string }).reply;
      const hdrs = headers();
      hdrs.set(ReplyHeaders.ack, ack(real));
      hostile.publish(replica, new TextEncoder().encode(JSON.stringify(replyTo(message))), { headers: hdrs });
      return { waiting, msg };
    };

    const before = await dropped('message-service', family);
    await survives(async () => {
      // A space: `PUB <ack> a b <size>` would break the message service's protocol line.
      const spaced = await attempt((real) => `${real} a b`);
      // Two tokens: the second would become the reply subject of the ack.
      const injected = await attempt((real) => `${real} $JS.API.STREAM.PURGE.${stream}`);
      // Extra tokens, a wildcard, another agent's consumer.
      const extra = await attempt((real) => `${real}.$JS.API.STREAM.PURGE.${stream}`);
      const wildcard = await attempt(() => `$JS.ACK.${stream}.${AgentInbox.consumerName(H)}.>`);
      const foreign = await attempt((real) =>
        real.replace(AgentInbox.consumerName(H), AgentInbox.consumerName(LONELY)),
      );
      for (const { waiting, msg } of [spaced, injected, extra, wildcard, foreign]) {
        expect((await waiting).data?.result).toEqual({ status: 'timeout' });
        msg.term();
      }
    });
    await expect.poll(() => dropped('message-service', family), { timeout: 5_000 }).toBe(before + 5);

    // The same reply with its real ack subject is stored and acked for the pod: the path itself works.
    const ok = await attempt((real) => real);
    expect((await ok.waiting).data?.result).toMatchObject({ status: 'replied' });
  });

  it("cannot flood the gateways with notices, nor forge the gateways' own", async () => {
    const notices = subject(prefix, `agents.${H}.notices`);
    const family = 'agents.*.notices';
    const before = await dropped('gateway', family);
    await survives(async () => {
      // Kinds only gateways send: a list change would make every client list again.
      hostile.publish(notices, new TextEncoder().encode(JSON.stringify({ kind: 'tools_list_changed' })));
      hostile.publish(notices, new TextEncoder().encode(JSON.stringify({ kind: 'task_status', task_id: 't1' })));
      // A flood of resource updates: past the burst, dropped.
      const update = new TextEncoder().encode(JSON.stringify({ kind: 'resource_updated', uri: 'test://x' }));
      for (let i = 0; i < 2_000; i++) hostile.publish(notices, update);
    });
    await expect.poll(() => dropped('gateway', family), { timeout: 5_000 }).toBeGreaterThanOrEqual(before + 1_500);
  });
});
