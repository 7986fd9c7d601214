import type { Client } from '@a2a-js/sdk/client';
import type { Message, StreamResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import {
  a2aClient,
  a2aLegacyClient,
  type Binding,
  dataPart,
  freePort,
  startTestStack,
  type TestStack,
  userMessage,
} from '@mcpgw/devstack';
import { Client as Pg } from 'pg';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver, type Received } from './support/webhook-receiver';

const RECEIVER_PORT = await freePort();
/** The key that seals secrets and credentials; the receiver's address and port allowed through the SSRF guard. */
const ENV = {
  WEBHOOK_SECRET_KEY: 'a2a-push-e2e-secret-key-0123456789abcdef',
  WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${RECEIVER_PORT}`,
};
const GATEWAY_ENV = { WEBHOOK_POLL_INTERVAL_MS: '100', WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_RETRY_MAX_MS: '400' };

/** A push body: the A2A `StreamResponse` (ProtoJSON), a status update. */
interface PushBody {
  statusUpdate: {
    taskId: string;
    contextId: string;
    status: {
      state: string;
      timestamp: string;
      message?: { parts: Record<string, unknown>[]; metadata?: Record<string, unknown> };
    };
  };
}
/** The SDK's TaskState numbers (ProtoJSON's TASK_STATE_* names on the wire). */
const WORKING = 2;
const COMPLETED = 3;
const INPUT_REQUIRED = 6;
const bodyOf = (r: Received) => JSON.parse(r.body) as PushBody;
const statesAt = (receiver: WebhookReceiver, path: string) =>
  receiver.at(path).map((r) => bodyOf(r).statusUpdate.status.state);
/** A 0.3 push body: the Task in 0.3's shape (`kind: "task"`, lower-case states), as 0.3's SDKs send it. */
interface V03Body {
  kind: string;
  id: string;
  contextId: string;
  status: { state: string };
  artifacts: { parts: { kind: string; text?: string }[] }[];
}
const v03StatesAt = (receiver: WebhookReceiver, path: string) =>
  receiver.at(path).map((r) => (JSON.parse(r.body) as V03Body).status.state);

/**
 * A2A push notifications (apps/gateway/src/a2a/README.md, "Push notifications")
 * through the official SDK client on both bindings: configs made with a task or
 * for one, delivered by the webhook outbox to a real receiver that checks the
 * config's headers and verifies the Standard Webhooks signature with
 * `standardwebhooks`; configs are the caller's own; private addresses refused.
 */
describe('A2A 1.0 push notifications, with the official SDK client', () => {
  let env: TestStack;
  let receiver: WebhookReceiver;
  let signingSecret: string;
  let otherKey: string;
  let db: Pg;

  const clientOf = (binding: Binding, apiKey = env.apiKey): Promise<Client> =>
    a2aClient(`${env.gatewayUrls[0]}/a2a/${env.agentId}/`, binding, apiKey);
  const config = (path: string, extra: Partial<TaskPushNotificationConfig> = {}): TaskPushNotificationConfig => ({
    tenant: '',
    id: '',
    taskId: '',
    url: receiver.url(path),
    token: `token-${path}`,
    authentication: { scheme: 'Bearer', credentials: `cred-${path}` },
    ...extra,
  });
  /** A message naming `skill`, its push config with it; returnImmediately unless `blocking`. */
  const request = (skill: string, args: unknown, push?: TaskPushNotificationConfig, { blocking = false } = {}) => ({
    tenant: '',
    message: userMessage(skill, [dataPart(args)]),
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: push, returnImmediately: !blocking },
    metadata: undefined,
  });
  const send = (client: Client, skill: string, args: unknown, push?: TaskPushNotificationConfig, blocking = false) =>
    client.sendMessage(request(skill, args, push, { blocking })) as Promise<Task>;
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => new Error('not refused'),
      (e: Error) => e,
    );
  /** Every delivery to `path` carries the config's headers and a signature the caller's secret verifies. */
  const expectSignedWithHeaders = (path: string) => {
    for (const request of receiver.at(path)) {
      expect(request.verifiedWith).toEqual(['caller']);
      expect(request.headers.authorization).toBe(`Bearer cred-${path}`);
      expect(request.headers['x-a2a-notification-token']).toBe(`token-${path}`);
      expect(request.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(request.headers['content-type']).toBe('application/json');
    }
  };

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start(RECEIVER_PORT);
    env = await startTestStack({ env: ENV, gatewayEnv: GATEWAY_ENV });
    otherKey = (await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', env.agentId)).key;
    const read = await fetch(`${env.gatewayUrls[0]}/api/v1/agents/${env.agentId}/a2a/push-secret`, {
      headers: { 'x-agent-api-key': env.apiKey },
    });
    expect(read.status).toBe(200);
    signingSecret = ((await read.json()) as { secret: string }).secret;
    db = new Pg({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await env?.stop();
    await receiver?.stop();
  });

  it('the card says pushNotifications; each caller has its own signing secret, the same on every read', async () => {
    const card = await (await fetch(`${env.gatewayUrls[0]}/a2a/${env.agentId}/.well-known/agent-card.json`)).json();
    expect(card.capabilities.pushNotifications).toBe(true);
    expect(signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    const again = await fetch(`${env.gatewayUrls[0]}/api/v1/agents/${env.agentId}/a2a/push-secret`, {
      headers: { 'x-agent-api-key': env.apiKey },
    });
    expect(((await again.json()) as { secret: string }).secret).toBe(signingSecret);
    const theirs = await fetch(`${env.gatewayUrls[0]}/api/v1/agents/${env.agentId}/a2a/push-secret`, {
      headers: { 'x-agent-api-key': otherKey },
    });
    expect(((await theirs.json()) as { secret: string }).secret).not.toBe(signingSecret);
    const none = await fetch(`${env.gatewayUrls[0]}/api/v1/agents/${env.agentId}/a2a/push-secret`);
    expect(none.status).toBe(401);
  });

  for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
    it(`over ${binding}: a config sent with the task gets WORKING and COMPLETED, signed, with its headers`, async () => {
      const path = `/send-${binding}`;
      receiver.verify(path, { caller: signingSecret });
      const task = await send(await clientOf(binding), 'sleep', { ms: 300 }, config(path));
      await expect
        .poll(() => statesAt(receiver, path).sort(), { timeout: 15_000 })
        .toEqual(['TASK_STATE_COMPLETED', 'TASK_STATE_WORKING']);
      expectSignedWithHeaders(path);
      for (const request of receiver.at(path)) {
        expect(bodyOf(request).statusUpdate).toMatchObject({ taskId: task.id, contextId: task.contextId });
        expect(request.body).not.toContain(env.apiKey);
      }
    });

    it(`over ${binding}: create, get, list and delete configs of a task; a cancel is pushed to each`, async () => {
      const client = await clientOf(binding);
      const task = await send(client, 'sleep', { ms: 30_000 });
      const [a, b] = [`/crud-a-${binding}`, `/crud-b-${binding}`];
      receiver.verify(a, { caller: signingSecret }).verify(b, { caller: signingSecret });
      const made = await client.createTaskPushNotificationConfig(config(a, { id: 'cfg-a', taskId: task.id }));
      expect(made).toMatchObject({ id: 'cfg-a', taskId: task.id, url: receiver.url(a) });
      // Credentials and token are write-only: only the scheme is read back.
      expect(made.authentication?.scheme).toBe('Bearer');
      expect(made.authentication?.credentials ?? '').toBe('');
      expect(made.token ?? '').toBe('');
      const second = await client.createTaskPushNotificationConfig(config(b, { taskId: task.id }));
      expect(second.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-a' })).toMatchObject({
        id: 'cfg-a',
        url: receiver.url(a),
      });
      const listed = await client.listTaskPushNotificationConfig({
        tenant: '',
        taskId: task.id,
        pageSize: 0,
        pageToken: '',
      });
      expect(listed.configs.map((c) => c.id)).toEqual(['cfg-a', second.id]);
      // Each config starts with the task's state when it was made.
      await expect
        .poll(() => [...statesAt(receiver, a), ...statesAt(receiver, b)], { timeout: 10_000 })
        .toEqual(['TASK_STATE_WORKING', 'TASK_STATE_WORKING']);

      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: second.id });
      const gone = await refusal(client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: second.id }));
      expect(gone.name).toBe('TaskNotFoundError');
      expect(
        (await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' }))
          .configs,
      ).toHaveLength(1);

      await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      await expect.poll(() => statesAt(receiver, a), { timeout: 10_000 }).toContain('TASK_STATE_CANCELED');
      expectSignedWithHeaders(a);
      expect(statesAt(receiver, b)).toEqual(['TASK_STATE_WORKING']);
    });

    it(`over ${binding}: another caller cannot create, read, list or delete a config of the task (-32001)`, async () => {
      const mine = await clientOf(binding);
      const task = await send(mine, 'sleep', { ms: 2_000 });
      await mine.createTaskPushNotificationConfig(config('/mine', { id: 'mine', taskId: task.id }));
      const stranger = await clientOf(binding, otherKey);
      const attempts = [
        () => stranger.createTaskPushNotificationConfig(config('/theirs', { id: 'theirs', taskId: task.id })),
        () => stranger.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'mine' }),
        () => stranger.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' }),
        () => stranger.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'mine' }),
      ];
      for (const attempt of attempts) expect((await refusal(attempt())).name).toBe('TaskNotFoundError');
      const kept = await mine.listTaskPushNotificationConfig({
        tenant: '',
        taskId: task.id,
        pageSize: 0,
        pageToken: '',
      });
      expect(kept.configs.map((c) => c.id)).toEqual(['mine']);
    });

    it(`over ${binding}: a blocking message with a config is a task: answered with the Task once it ends, pushed`, async () => {
      const path = `/blocking-${binding}`;
      receiver.verify(path, { caller: signingSecret });
      const client = await clientOf(binding);
      const answer = await send(client, 'sleep', { ms: 300 }, config(path), true);
      // The spec: a blocking SendMessage waits for a terminal (or interrupted) state, then answers the Task.
      expect((answer as Task & Partial<Message>).role).toBeUndefined();
      expect(answer.id).toMatch(/^call_[0-9a-f]+$/);
      expect(answer.status?.state).toBe(COMPLETED);
      expect(answer.artifacts[0].parts[0].content).toEqual({ $case: 'text', value: 'slept 300 ms' });
      // Stored, as a returnImmediately task: GetTask reads it, its config is listed.
      expect((await client.getTask({ tenant: '', id: answer.id, historyLength: undefined })).status?.state).toBe(
        COMPLETED,
      );
      const listed = await client.listTaskPushNotificationConfig({
        tenant: '',
        taskId: answer.id,
        pageSize: 0,
        pageToken: '',
      });
      expect(listed.configs.map((c) => c.id)).toEqual([answer.id]);
      await expect
        .poll(() => statesAt(receiver, path).sort(), { timeout: 15_000 })
        .toEqual(['TASK_STATE_COMPLETED', 'TASK_STATE_WORKING']);
      expectSignedWithHeaders(path);
      for (const request of receiver.at(path)) expect(bodyOf(request).statusUpdate.taskId).toBe(answer.id);
    });

    it(`over ${binding}: a streamed message with a config streams its task and pushes its changes`, async () => {
      const path = `/stream-${binding}`;
      receiver.verify(path, { caller: signingSecret });
      const client = await clientOf(binding);
      const events: StreamResponse[] = [];
      for await (const event of client.sendMessageStream(
        request('sleep', { ms: 400, progress_every_ms: 100 }, config(path), { blocking: true }),
      ))
        events.push(event);
      const cases = events.map((event) => event.payload?.$case);
      expect(cases[0]).toBe('task');
      expect(cases).toContain('artifactUpdate');
      const task = events[0].payload!.value as Task;
      expect(events.at(-1)!.payload).toMatchObject({
        $case: 'statusUpdate',
        value: { taskId: task.id, status: { state: COMPLETED } },
      });
      await expect
        .poll(() => statesAt(receiver, path).sort(), { timeout: 15_000 })
        .toEqual(['TASK_STATE_COMPLETED', 'TASK_STATE_WORKING']);
      expectSignedWithHeaders(path);
      expect(bodyOf(receiver.at(path)[0]).statusUpdate).toMatchObject({ taskId: task.id, contextId: task.contextId });
    });
  }

  it('a blocking message with a config whose skill asks answers the Task in INPUT_REQUIRED (an interrupted state)', async () => {
    const path = '/blocking-asks';
    receiver.verify(path, { caller: signingSecret });
    const answer = await send(
      await clientOf('JSONRPC'),
      'test_input_required_result_elicitation',
      {},
      config(path),
      true,
    );
    expect(answer.status?.state).toBe(INPUT_REQUIRED);
    expect(answer.status?.message?.metadata).toMatchObject({ inputRequestKey: 'user_name' });
    await expect.poll(() => statesAt(receiver, path), { timeout: 10_000 }).toContain('TASK_STATE_INPUT_REQUIRED');
  });

  it('a blocking or streamed message with a refused config makes no task and runs nothing', async () => {
    const client = await clientOf('JSONRPC');
    const taskCount = async () => (await db.query(`SELECT count(*)::int AS n FROM gateway.mcp_tasks`)).rows[0].n;
    const before = await taskCount();
    const bad = { ...config('/refused'), url: 'http://10.0.0.1/hook' };
    expect((await refusal(send(client, 'sleep', { ms: 10 }, bad, true))).name).toBe('RequestMalformedError');
    const streamed = (async () => {
      for await (const event of client.sendMessageStream(request('sleep', { ms: 10 }, bad, { blocking: true })))
        void event;
    })();
    expect((await refusal(streamed)).name).toBe('RequestMalformedError');
    const malformed = { ...config('/refused'), authentication: { scheme: 'Bearer x', credentials: 'y' } };
    expect((await refusal(send(client, 'sleep', { ms: 10 }, malformed, true))).name).toBe('RequestMalformedError');
    expect(await taskCount()).toBe(before);
  });

  it('A2A 0.3 (the SDK with legacyCompat): set, get, list and delete configs, and a config sent with a message', async () => {
    const client = await a2aLegacyClient(`${env.gatewayUrls[0]}/a2a/${env.agentId}/`, {
      'x-agent-api-key': env.apiKey,
    });
    expect(client.protocolVersion).toBe('0.3');
    // message/send, blocking, with configuration.pushNotificationConfig: a task, pushed in 0.3's body (the
    // Task), signed, with its headers.
    const path = '/v03-send';
    receiver.verify(path, { caller: signingSecret });
    const done = await send(client, 'sleep', { ms: 200 }, config(path), true);
    expect(done.status?.state).toBe(COMPLETED);
    await expect.poll(() => v03StatesAt(receiver, path).sort(), { timeout: 15_000 }).toEqual(['completed', 'working']);
    expectSignedWithHeaders(path);
    const completed = receiver
      .at(path)
      .map((r) => JSON.parse(r.body) as V03Body)
      .find((b) => b.status.state === 'completed')!;
    expect(completed).toMatchObject({ kind: 'task', id: done.id, contextId: done.contextId });
    expect(completed.artifacts[0].parts[0]).toEqual({ kind: 'text', text: 'slept 200 ms' });
    // The config made with the message is named by the task (0.3's default id), and read back in 0.3's shape.
    expect(await client.getTaskPushNotificationConfig({ tenant: '', taskId: done.id, id: '' })).toMatchObject({
      taskId: done.id,
      id: done.id,
      url: receiver.url(path),
      authentication: { scheme: 'Bearer', credentials: '' },
    });

    const task = await send(client, 'sleep', { ms: 30_000 });
    expect(task.status?.state).toBe(WORKING);
    const [a, b] = ['/v03-a', '/v03-b'];
    receiver.verify(a, { caller: signingSecret }).verify(b, { caller: signingSecret });
    const made = await client.createTaskPushNotificationConfig(config(a, { id: 'v03-a', taskId: task.id }));
    expect(made).toMatchObject({ id: 'v03-a', taskId: task.id, url: receiver.url(a), token: '' });
    const unnamed = await client.createTaskPushNotificationConfig(config(b, { taskId: task.id }));
    expect(unnamed.id).toBe(task.id);
    expect(await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'v03-a' })).toMatchObject({
      id: 'v03-a',
      url: receiver.url(a),
    });
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(listed.configs.map((c) => c.id).sort()).toEqual([task.id, 'v03-a'].sort());
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: task.id });
    const gone = await refusal(client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: task.id }));
    expect(gone.name).toBe('TaskNotFoundError');
    // A config made over 1.0 for the same task hears 1.0's body; each config its own version's.
    const c = '/v03-task-v10-config';
    receiver.verify(c, { caller: signingSecret });
    await (await clientOf('JSONRPC')).createTaskPushNotificationConfig(config(c, { id: 'v10', taskId: task.id }));
    await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    await expect.poll(() => v03StatesAt(receiver, a), { timeout: 10_000 }).toContain('canceled');
    await expect.poll(() => statesAt(receiver, c), { timeout: 10_000 }).toContain('TASK_STATE_CANCELED');
    // Deliveries are unordered: compared as sets.
    expect(v03StatesAt(receiver, a).sort()).toEqual(['canceled', 'working']);
    expect(statesAt(receiver, c).sort()).toEqual(['TASK_STATE_CANCELED', 'TASK_STATE_WORKING']);
    expectSignedWithHeaders(a);
    expectSignedWithHeaders(c);
    // Another caller's task, over 0.3 too: -32001.
    const stranger = await a2aLegacyClient(`${env.gatewayUrls[0]}/a2a/${env.agentId}/`, {
      'x-agent-api-key': otherKey,
    });
    const theirs = await refusal(
      stranger.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' }),
    );
    expect(theirs.name).toBe('TaskNotFoundError');
  });

  it('A2A 0.3: a config that is not one is -32602, an unknown config -32001, over raw JSON-RPC', async () => {
    const rpc = async (method: string, params: unknown) =>
      (await (
        await fetch(`${env.gatewayUrls[0]}/a2a/${env.agentId}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-agent-api-key': env.apiKey },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        })
      ).json()) as { result?: unknown; error?: { code: number } };
    const task = await send(await clientOf('JSONRPC'), 'sleep', { ms: 1_000 });
    for (const params of [
      { taskId: task.id },
      { taskId: task.id, pushNotificationConfig: 'https://example.com' },
      { taskId: task.id, pushNotificationConfig: { url: receiver.url('/x'), authentication: { schemes: 'Bearer' } } },
      { taskId: task.id, pushNotificationConfig: { url: receiver.url('/x'), authentication: { schemes: [] } } },
    ])
      expect((await rpc('tasks/pushNotificationConfig/set', params)).error?.code).toBe(-32602);
    expect((await rpc('tasks/pushNotificationConfig/get', { id: task.id })).error?.code).toBe(-32001);
    expect(
      (await rpc('tasks/pushNotificationConfig/delete', { id: task.id, pushNotificationConfigId: 'nope' })).error?.code,
    ).toBe(-32001);
    expect((await rpc('tasks/pushNotificationConfig/list', { id: task.id })).result).toEqual([]);
    expect((await rpc('tasks/pushNotificationConfig/list', [])).error?.code).toBe(-32602);
  });

  it('INPUT_REQUIRED is pushed with the question, then COMPLETED after the answer', async () => {
    const path = '/asks';
    receiver.verify(path, { caller: signingSecret });
    const client = await clientOf('JSONRPC');
    const task = await send(client, 'test_input_required_result_elicitation', {}, config(path));
    await expect.poll(() => statesAt(receiver, path), { timeout: 10_000 }).toContain('TASK_STATE_INPUT_REQUIRED');
    const asking = receiver
      .at(path)
      .map(bodyOf)
      .find((b) => b.statusUpdate.status.state === 'TASK_STATE_INPUT_REQUIRED')!;
    expect(asking.statusUpdate.status.message).toMatchObject({
      parts: [{ text: 'What is your name?' }, expect.anything()],
      metadata: { inputRequestKey: 'user_name' },
    });
    await client.sendMessage({
      tenant: '',
      message: {
        messageId: randomUUID(),
        contextId: '',
        taskId: task.id,
        role: 1,
        parts: [
          { content: { $case: 'data', value: { name: 'Ada' } }, metadata: undefined, filename: '', mediaType: '' },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: undefined,
      metadata: undefined,
    });
    await expect.poll(() => statesAt(receiver, path), { timeout: 10_000 }).toContain('TASK_STATE_COMPLETED');
    // The answer made it work again: pushed too.
    const afterQuestion = receiver
      .at(path)
      .filter(
        (r) => Date.parse(bodyOf(r).statusUpdate.status.timestamp) >= Date.parse(asking.statusUpdate.status.timestamp),
      );
    expect(afterQuestion.map((r) => bodyOf(r).statusUpdate.status.state)).toContain('TASK_STATE_WORKING');
    expectSignedWithHeaders(path);
  });

  it('SSRF: a private, loopback or unlisted-port URL is refused, with the task or for it; nothing is stored', async () => {
    const client = await clientOf('HTTP+JSON');
    const task = await send(client, 'sleep', { ms: 2_000 });
    const refusedUrls = [
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest',
      `http://127.0.0.1:${RECEIVER_PORT + 1}/x`,
      'http://192.168.1.1/x',
    ];
    for (const url of refusedUrls.slice(0, 3)) {
      const refused = await refusal(
        client.createTaskPushNotificationConfig({ ...config('/ssrf', { taskId: task.id }), url }),
      );
      expect(refused.name).toBe('RequestMalformedError');
      expect(refused.message).toMatch(/private, loopback or link-local|not allowed|WEBHOOK_ALLOWED_HOSTS/);
    }
    const taskCount = async () => (await db.query(`SELECT count(*)::int AS n FROM gateway.mcp_tasks`)).rows[0].n;
    const before = await taskCount();
    const withTask = await refusal(send(client, 'sleep', { ms: 10 }, { ...config('/ssrf'), url: refusedUrls[3] }));
    expect(withTask.name).toBe('RequestMalformedError');
    // Refused before the call was posted: the message made no task.
    expect(await taskCount()).toBe(before);
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM gateway.webhooks WHERE url = ANY ($1::text[])`, [
      refusedUrls,
    ]);
    expect(rows[0].n).toBe(0);
  });

  it('a config whose token or credentials would split a header is refused', async () => {
    const client = await clientOf('JSONRPC');
    const task = await send(client, 'sleep', { ms: 1_000 });
    const crlf = await refusal(
      client.createTaskPushNotificationConfig(config('/crlf', { taskId: task.id, token: 'a\r\nx-injected: 1' })),
    );
    expect(crlf.name).toBe('RequestMalformedError');
    const scheme = await refusal(
      client.createTaskPushNotificationConfig(
        config('/crlf', { taskId: task.id, authentication: { scheme: 'Bearer x', credentials: 'y' } }),
      ),
    );
    expect(scheme.name).toBe('RequestMalformedError');
  });

  it('rotating the signing secret: deliveries carry both signatures through the window, to configs made before too', async () => {
    const client = await clientOf('JSONRPC');
    const before = await send(client, 'sleep', { ms: 1_500 }, config('/rotate-before'));
    const rotated = await fetch(`${env.gatewayUrls[0]}/api/v1/agents/${env.agentId}/a2a/push-secret/rotate`, {
      method: 'POST',
      headers: { 'x-agent-api-key': env.apiKey },
    });
    expect(rotated.status).toBe(200);
    const fresh = ((await rotated.json()) as { secret: string }).secret;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(signingSecret);
    receiver.verify('/rotate-before', { old: signingSecret, fresh });
    receiver.verify('/rotate-after', { old: signingSecret, fresh });
    await send(client, 'sleep', { ms: 10 }, config('/rotate-after'));
    await expect.poll(() => statesAt(receiver, '/rotate-after'), { timeout: 10_000 }).toContain('TASK_STATE_COMPLETED');
    await expect
      .poll(() => statesAt(receiver, '/rotate-before'), { timeout: 10_000 })
      .toContain('TASK_STATE_COMPLETED');
    // The config made before the rotation signs its later deliveries with both; a new config too.
    const completed = (path: string) =>
      receiver.at(path).find((r) => bodyOf(r).statusUpdate.status.state === 'TASK_STATE_COMPLETED')!;
    expect(completed('/rotate-before').verifiedWith.sort()).toEqual(['fresh', 'old']);
    expect(completed('/rotate-after').verifiedWith.sort()).toEqual(['fresh', 'old']);
    expect(bodyOf(completed('/rotate-before')).statusUpdate.taskId).toBe(before.id);
    signingSecret = fresh;
  });

  it('credentials, token and signing secret are sealed at rest and never logged', async () => {
    const path = '/sealed';
    const client = await clientOf('JSONRPC');
    const task = await send(client, 'sleep', { ms: 1_000 });
    await client.createTaskPushNotificationConfig(config(path, { taskId: task.id }));
    const { rows } = await db.query(
      `SELECT secret, a2a_headers FROM gateway.webhooks WHERE a2a_task_id IS NOT NULL AND url = $1`,
      [receiver.url(path)],
    );
    expect(rows).toHaveLength(1);
    const stored = Buffer.concat([rows[0].secret, rows[0].a2a_headers]).toString('latin1');
    for (const plain of [`cred-${path}`, `token-${path}`, signingSecret, signingSecret.slice(6)])
      expect(stored).not.toContain(plain);
    const secrets = await db.query(`SELECT secret FROM gateway.a2a_push_secrets`);
    for (const row of secrets.rows)
      expect((row.secret as Buffer).toString('latin1')).not.toContain(signingSecret.slice(6));
    const logged = JSON.stringify(env.stack.processes.filter((p) => p.name.startsWith('gateway')).map((p) => p.logs));
    for (const plain of [`cred-${path}`, `token-${path}`, signingSecret.slice(6)]) expect(logged).not.toContain(plain);
  });
});
