import { BusClient, credsClaims, inboxPrefix, type BusIdentity } from '@mcpgw/bus';
import { AgentInbox, BusPattern, ReplicaReplies, subject, type AgentReply } from '@mcpgw/contracts';
import { startTestStack, workspaceRoot, type TestStack } from '@mcpgw/devstack';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connect, credsAuthenticator, type NatsConnection } from 'nats';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * NATS auth on a whole stack (its own nats-server, operator mode): what a
 * rogue client can do with no credentials, and with agent A's credentials
 * against agent B (the stack's demo-agent) and the services.
 */
describe('the bus trusts nobody without credentials', () => {
  let env: TestStack;
  let prefix: string;
  const opened: NatsConnection[] = [];
  const A = 'agent-a';
  const B = 'demo-agent';
  const LONELY = 'lonely-agent';

  const connectAs = async (identity: BusIdentity, creds?: string) => {
    const text = creds ?? (await env.nats!.issue(identity)).creds;
    const nc = await connect({
      servers: env.nats!.url,
      authenticator: credsAuthenticator(new TextEncoder().encode(text)),
      inboxPrefix: inboxPrefix(prefix, identity),
      maxReconnectAttempts: 0,
    });
    opened.push(nc);
    return nc;
  };

  /** The server's permissions violation for `subject` after `act`, or undefined within 2 s. */
  const violation = async (nc: NatsConnection, on: string, act: () => unknown) => {
    const seen = (async () => {
      for await (const status of nc.status()) {
        const ctx = (status as { permissionContext?: { subject: string; operation: string } }).permissionContext;
        if (status.type === 'error' && ctx?.subject === on) return ctx.operation;
      }
      return undefined;
    })();
    await act();
    return Promise.race([seen, new Promise<undefined>((r) => setTimeout(() => r(undefined), 2_000))]);
  };

  const asGateway = async () => {
    const nc = await connectAs({ role: 'gateway' });
    return new BusClient(nc, { url: env.nats!.url, prefix, name: 'test-gateway', identity: { role: 'gateway' } });
  };

  const reply = (channelId: string, inReplyTo: string, agentId: string): AgentReply => ({
    type: 'agent_reply',
    id: randomUUID(),
    channel_id: channelId,
    agent_id: agentId,
    in_reply_to: inReplyTo,
    created_at: new Date().toISOString(),
    content: [{ type: 'text', text: `from ${agentId}` }],
  });

  beforeAll(async () => {
    env = await startTestStack({ auth: true });
    prefix = env.stack.settings.busPrefix;
  }, 60_000);

  afterAll(async () => {
    await Promise.all(opened.map((nc) => nc.close().catch(() => undefined)));
    await env?.stop();
  });

  it('serves calls end to end with every app on its own credentials', async () => {
    const gateway = await asGateway();
    const channel = await gateway.request(BusPattern.CreateChannel, { agent_id: B });
    const answer = await gateway.request(
      BusPattern.PostAndWait,
      {
        envelope: {
          type: 'chat_message',
          id: randomUUID(),
          channel_id: channel.id,
          agent_id: B,
          sender: { kind: 'user', id: 'tester' },
          created_at: new Date().toISOString(),
          text: 'hi',
          tool_call: { name: 'echo', arguments: { text: 'hi' } },
        } as never,
        timeout_ms: 10_000,
      },
      15_000,
    );
    expect(answer.result.status).toBe('replied');
  });

  it('serves an MCP client through the real gateway on its credentials: progress, sampling, no permission refused', async () => {
    const client = new Client({ name: 'auth-client', version: '1.0.0' }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'sampled' },
      model: 'test-model',
    }));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(env.mcpUrl()), {
        requestInit: { headers: { 'X-Agent-API-Key': env.apiKey } },
      }),
    );
    try {
      const progress: number[] = [];
      const slept = await client.callTool(
        { name: 'sleep', arguments: { ms: 300, progress_every_ms: 100 } },
        undefined,
        {
          onprogress: (p) => progress.push(p.progress),
        },
      );
      expect(slept.isError).toBeFalsy();
      expect(progress.length).toBeGreaterThan(0);
      const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'hello' } });
      expect(sampled.content).toEqual([{ type: 'text', text: 'LLM response: sampled' }]);
    } finally {
      await client.close();
    }
    const violations = env.stack.processes.flatMap((p) =>
      p.logs.filter((line) => line.msg === 'nats permissions violation').map((line) => ({ app: p.name, ...line })),
    );
    expect(violations).toEqual([]);
  });

  it('refuses a client without credentials', async () => {
    await expect(connect({ servers: env.nats!.url, maxReconnectAttempts: 0 })).rejects.toThrow(/authorization/i);
  });

  it("agent A cannot read B's inbox: no subscription to it", async () => {
    const nc = await connectAs({ role: 'agent', agentId: A });
    const inbox = AgentInbox.subject(prefix, B);
    expect(await violation(nc, inbox, () => nc.subscribe(inbox))).toBe('subscription');
  });

  it("agent A cannot pull from or ack on B's consumer", async () => {
    const nc = await connectAs({ role: 'agent', agentId: A });
    const next = `$JS.API.CONSUMER.MSG.NEXT.${AgentInbox.streamName(prefix)}.${AgentInbox.consumerName(B)}`;
    expect(await violation(nc, next, () => nc.publish(next))).toBe('publish');
    const ack = `$JS.ACK.${AgentInbox.streamName(prefix)}.${AgentInbox.consumerName(B)}.1.1.1.1.1`;
    expect(await violation(nc, ack, () => nc.publish(ack))).toBe('publish');
  });

  it('agent A cannot make, change or delete consumers other than its own, nor touch the stream', async () => {
    const nc = await connectAs({ role: 'agent', agentId: A });
    const stream = AgentInbox.streamName(prefix);
    const ownNameOtherFilter = `$JS.API.CONSUMER.CREATE.${stream}.${AgentInbox.consumerName(A)}.${AgentInbox.subject(prefix, B)}`;
    expect(await violation(nc, ownNameOtherFilter, () => nc.publish(ownNameOtherFilter))).toBe('publish');
    const durable = `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${AgentInbox.consumerName(A)}`;
    expect(await violation(nc, durable, () => nc.publish(durable))).toBe('publish');
    const del = `$JS.API.CONSUMER.DELETE.${stream}.${AgentInbox.consumerName(B)}`;
    expect(await violation(nc, del, () => nc.publish(del))).toBe('publish');
    const purge = `$JS.API.STREAM.PURGE.${stream}`;
    expect(await violation(nc, purge, () => nc.publish(purge))).toBe('publish');
  });

  it('agent A cannot post or wait on any channel (post, post-and-wait, wait, list, create)', async () => {
    const nc = await connectAs({ role: 'agent', agentId: A });
    for (const op of [
      BusPattern.PostMessage,
      BusPattern.PostAndWait,
      BusPattern.WaitForReply,
      BusPattern.ListMessages,
      BusPattern.CreateChannel,
    ]) {
      const to = subject(prefix, op);
      expect(await violation(nc, to, () => nc.publish(to, new Uint8Array())), op).toBe('publish');
    }
  });

  it('agent A cannot register as B', async () => {
    const nc = await connectAs({ role: 'agent', agentId: A });
    const to = subject(prefix, BusPattern.RegisterAgent.replace('*', B));
    expect(await violation(nc, to, () => nc.publish(to, new Uint8Array()))).toBe('publish');
  });

  it("agent A cannot reply on B's subjects, nor hear another identity's replies", async () => {
    const nc = await connectAs({ role: 'agent', agentId: A });
    const replica = ReplicaReplies.subject(prefix, 'anyreplica', B);
    expect(await violation(nc, replica, () => nc.publish(replica, new Uint8Array()))).toBe('publish');
    const store = subject(prefix, BusPattern.StoreReply.replace('*', B));
    expect(await violation(nc, store, () => nc.publish(store, new Uint8Array()))).toBe('publish');
    const gatewayInbox = `${inboxPrefix(prefix, { role: 'gateway' })}.>`;
    expect(await violation(nc, gatewayInbox, () => nc.subscribe(gatewayInbox))).toBe('subscription');
  });

  it("a reply from the wrong agent is refused and never reaches the waiting client; the channel's agent's is stored, stamped", async () => {
    const gateway = await asGateway();
    const channel = await gateway.request(BusPattern.CreateChannel, { agent_id: LONELY });
    const message = {
      type: 'chat_message' as const,
      id: randomUUID(),
      channel_id: channel.id,
      agent_id: LONELY,
      sender: { kind: 'user' as const, id: 'tester' },
      created_at: new Date().toISOString(),
      text: 'anyone?',
    };
    const waiting = gateway.request(BusPattern.PostAndWait, { envelope: message as never, timeout_ms: 3_000 }, 10_000);
    await new Promise((r) => setTimeout(r, 300));
    const rogue = new BusClient(await connectAs({ role: 'agent', agentId: A }), {
      url: env.nats!.url,
      prefix,
      name: 'rogue',
      identity: { role: 'agent', agentId: A },
    });
    // Its own subject, with the lonely agent's name in the envelope; then its own name on the lonely agent's channel.
    await expect(
      rogue.requestAs(A, BusPattern.StoreReply, { envelope: reply(channel.id, message.id, LONELY) }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(
      rogue.requestAs(A, BusPattern.StoreReply, { envelope: reply(channel.id, message.id, A) }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    expect((await waiting).result).toEqual({ status: 'timeout' });

    // The channel's own agent is heard: the same path works for the right identity.
    const lonely = new BusClient(await connectAs({ role: 'agent', agentId: LONELY }), {
      url: env.nats!.url,
      prefix,
      name: 'lonely',
      identity: { role: 'agent', agentId: LONELY },
    });
    const mine = reply(channel.id, message.id, LONELY);
    await lonely.requestAs(LONELY, BusPattern.StoreReply, { envelope: mine });
    const wait = await gateway.request(BusPattern.WaitForReply, {
      channel_id: channel.id,
      message_id: message.id,
      timeout_ms: 1_000,
    });
    expect(wait).toMatchObject({ status: 'replied', reply: { id: mine.id } });
    const db = new pg.Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(
        'SELECT id::text, sender FROM messaging.messages WHERE channel_id = $1 ORDER BY seq',
        [channel.id],
      );
      expect(rows).toEqual([
        { id: message.id, sender: 'gateway' },
        { id: mine.id, sender: `agent:${LONELY}` },
      ]);
    } finally {
      await db.end();
    }
  });

  it('the admin CLI issues pod credentials that serve, and revoked ones are refused at once', async () => {
    const out = await env.stack.admin<{ agent_id: string; user: string; file: string }>(
      'agent',
      'credentials',
      '--agent',
      A,
      '--out',
      `${env.nats!.dir}/cli-${A}.creds`,
    );
    expect(out).toMatchObject({ agent_id: A, user: expect.stringMatching(/^U/) });
    const creds = readFileSync(out.file, 'utf8');
    const nc = await connectAs({ role: 'agent', agentId: A }, creds);
    const bus = new BusClient(nc, {
      url: env.nats!.url,
      prefix,
      name: 'cli-pod',
      identity: { role: 'agent', agentId: A },
    });
    const registered = await bus.requestAs(A, BusPattern.RegisterAgent, {
      workspace_id: 'demo',
      agent_id: A,
      pod_id: 'cli-pod',
      skills: [{ name: 'noop', description: 'noop', input_schema: { type: 'object' } }],
    } as never);
    expect(registered).toEqual({ registered: 1 });

    const closed = nc.closed();
    await env.stack.admin('agent', 'credentials', 'revoke', '--user', out.user);
    await closed;
    expect(nc.isClosed()).toBe(true);
    await expect(
      connect({
        servers: env.nats!.url,
        authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
        maxReconnectAttempts: 0,
      }),
    ).rejects.toThrow(/authorization/i);
  });

  it("revokes all of an agent's credentials at once, and lists them, never with a secret", async () => {
    const agent = 'agent-c';
    const issued = await Promise.all(
      [1, 2].map(() => env.stack.admin<{ user: string; creds: string }>('agent', 'credentials', '--agent', agent)),
    );
    const connections = await Promise.all(issued.map((one) => connectAs({ role: 'agent', agentId: agent }, one.creds)));
    const other = await connectAs(
      { role: 'agent', agentId: A },
      (await env.stack.admin<{ creds: string }>('agent', 'credentials', '--agent', A)).creds,
    );
    const revoked = await env.stack.admin<{ revoked: string[] }>('agent', 'credentials', 'revoke', '--agent', agent);
    expect(revoked.revoked.sort()).toEqual(issued.map((one) => one.user).sort());
    await Promise.all(connections.map((nc) => nc.closed()));
    expect(other.isClosed()).toBe(false);
    await other.flush();
    const listed = await env.stack.admin<Record<string, unknown>[]>('agent', 'credentials', 'list', '--agent', agent);
    expect(listed).toHaveLength(2);
    // The secrets themselves, read from the issued creds files: a seed is SU + 56 base32
    // characters, a user JWT starts with the encoded header. A public key may hold "SU" anywhere,
    // so only the issued values (and whole seed- or JWT-shaped strings) count as a leak.
    const secrets = issued.flatMap((one) => one.creds.match(/\bSU[A-Z2-7]{56}\b|\beyJ[\w-]+\.[\w-]+\.[\w-]+/g) ?? []);
    expect(secrets).toHaveLength(4);
    for (const row of listed) {
      expect(row).toMatchObject({ agent_id: agent, revoked_at: expect.any(String) });
      const text = JSON.stringify(row);
      for (const secret of secrets) expect(text).not.toContain(secret);
      expect(text).not.toMatch(/"SU[A-Z2-7]{56}"|"eyJ|NATS USER JWT/);
    }
  });

  it('credentials issued with --ttl carry exp: the server takes them until then, closes them and refuses them after', async () => {
    const agent = 'agent-ttl';
    // The control first: credentials of the same agent issued without --ttl, connected as long.
    // (Issued after the short ones, a slow admin run on a loaded machine could outlive their ttl.)
    const lasting = await env.stack.admin<{ creds: string; expires_at: number | null }>(
      'agent',
      'credentials',
      '--agent',
      agent,
    );
    expect(lasting.expires_at).toBeNull();
    expect(credsClaims(lasting.creds).exp).toBeUndefined();
    const issued = await env.stack.admin<{ user: string; creds: string; issued_at: number; expires_at: number }>(
      'agent',
      'credentials',
      '--agent',
      agent,
      '--ttl',
      '3',
    );
    expect(issued.expires_at - issued.issued_at).toBe(3);
    expect(credsClaims(issued.creds).exp).toBe(issued.expires_at);
    const short = await connectAs({ role: 'agent', agentId: agent }, issued.creds);
    const control = await connectAs({ role: 'agent', agentId: agent }, lasting.creds);
    await short.flush();

    await short.closed(); // the server closes it when the JWT expires
    expect(Date.now() / 1000).toBeGreaterThanOrEqual(issued.expires_at - 1);
    // exp is in whole seconds: a connect within the second it names may still be taken.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, (issued.expires_at + 1) * 1000 - Date.now())));
    await expect(
      connect({
        servers: env.nats!.url,
        authenticator: credsAuthenticator(new TextEncoder().encode(issued.creds)),
        maxReconnectAttempts: 0,
      }),
    ).rejects.toThrow(/authorization|expired/i);
    expect(control.isClosed()).toBe(false);
    await control.flush();
    const again = await connectAs({ role: 'agent', agentId: agent }, lasting.creds);
    await again.flush();

    const listed = await env.stack.admin<{ user: string; expires_at: string | null }[]>(
      'agent',
      'credentials',
      'list',
      '--agent',
      agent,
    );
    expect(listed.find((c) => c.user === issued.user)?.expires_at).toBe(
      new Date(issued.expires_at * 1000).toISOString(),
    );
    expect(listed.find((c) => c.user !== issued.user)?.expires_at).toBeNull();
    await expect(env.stack.admin('agent', 'credentials', '--agent', agent, '--ttl', '0')).rejects.toThrow(/--ttl/);
    // Four admin runs (a process each) and the wait for exp: on a loaded machine the runs alone took 20 s.
  }, 60_000);

  it("records the agents' users nats-init made, so that revoke --agent finds them", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcpgw-nats-init-'));
    try {
      const agent = 'agent-init';
      execFileSync(
        process.execPath,
        [
          join(workspaceRoot(), 'apps/gateway/dist/admin/nats-init.js'),
          dir,
          '--store',
          join(dir, 'js'),
          '--agents',
          agent,
        ],
        { stdio: 'ignore' },
      );
      const made = credsClaims(readFileSync(join(dir, `agent-${agent}.creds`), 'utf8')).sub;
      const file = join(dir, 'agent-users.json');
      // Public keys only: no seed, no JWT.
      expect(readFileSync(file, 'utf8')).not.toMatch(/SU[A-Z2-7]{56}|eyJ|SA[A-Z2-7]{56}|SO[A-Z2-7]{56}/);
      // Without the record step, the agent has no credentials revoke --agent would find (the bug).
      await expect(env.stack.admin('agent', 'credentials', 'revoke', '--agent', agent)).rejects.toThrow(
        /no NATS credentials/,
      );

      const first = await env.stack.admin<{ recorded: string[]; known: number }>(
        'agent',
        'credentials',
        'record',
        '--file',
        file,
      );
      expect(first).toEqual({ recorded: [made], known: 0 });
      const second = await env.stack.admin('agent', 'credentials', 'record', '--file', file);
      expect(second).toEqual({ recorded: [], known: 1 });
      const listed = await env.stack.admin<{ user: string; agent_id: string }[]>(
        'agent',
        'credentials',
        'list',
        '--agent',
        agent,
      );
      expect(listed.map((c) => c.user)).toEqual([made]);
      const revoked = await env.stack.admin<{ revoked: string[] }>('agent', 'credentials', 'revoke', '--agent', agent);
      expect(revoked.revoked).toEqual([made]);
      // Recording again leaves it revoked.
      await env.stack.admin('agent', 'credentials', 'record', '--file', file);
      const after = await env.stack.admin<{ revoked_at: string | null }[]>(
        'agent',
        'credentials',
        'list',
        '--agent',
        agent,
      );
      expect(after[0].revoked_at).toEqual(expect.any(String));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
