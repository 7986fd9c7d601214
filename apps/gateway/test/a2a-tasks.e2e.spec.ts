import type { Client } from '@a2a-js/sdk/client';
import type { Message, StreamResponse, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { messageIdOfCall } from '@mcpgw/contracts';
import { a2aClient, type Binding, dataPart, startTestStack, type TestStack, userMessage } from '@mcpgw/devstack';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendMessageRaw, type RawSendAnswer } from './support/a2a-raw';

const WORKING = 2;
const COMPLETED = 3;
const CANCELED = 5;
const INPUT_REQUIRED = 6;

/**
 * A2A tasks (apps/gateway/src/a2a/README.md, "Tasks") through the official SDK
 * client, over both bindings, on two gateway replicas: a task made on one is
 * read, listed and cancelled on the other, and only by the caller that made it.
 */
describe('A2A 1.0 tasks, with the official SDK client on two replicas', () => {
  let env: TestStack;

  const clientOf = (gateway: number, binding: Binding, apiKey = env.apiKey): Promise<Client> =>
    a2aClient(`${env.gatewayUrls[gateway]}/a2a/${env.agentId}/`, binding, apiKey);
  const send = (client: Client, skill: string, args: unknown, messageId = randomUUID(), returnImmediately = true) =>
    client.sendMessage({
      tenant: '',
      message: userMessage(skill, [dataPart(args)], { messageId }),
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        returnImmediately,
      },
      metadata: undefined,
    });
  const pod = () => env.stack.processes.find((p) => p.name.startsWith('agent-pod'))!;

  beforeAll(async () => {
    env = await startTestStack({
      gateways: 2,
      // contextIds are conversation handles: every replica must sign them with the same secret.
      gatewayEnv: { CONVERSATION_HANDLE_SECRET: randomUUID() },
      podEnv: { LOG_LEVEL: 'debug' },
    });
  });

  afterAll(async () => {
    await env?.stop();
  });

  for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
    describe(`over ${binding}`, () => {
      it('returnImmediately answers a working task; the other replica reads it until it completes with its artifact', async () => {
        const task = (await send(await clientOf(0, binding), 'sleep', { ms: 600 })) as Task;
        expect(task.id).toMatch(/^call_[0-9a-f]{32}$/);
        expect(task.status?.state).toBe(WORKING);
        const other = await clientOf(1, binding);
        await expect
          .poll(async () => (await other.getTask({ tenant: '', id: task.id })).status?.state, { timeout: 10_000 })
          .toBe(COMPLETED);
        const done = await other.getTask({ tenant: '', id: task.id });
        expect(done.contextId).toBe(task.contextId);
        expect(done.artifacts).toHaveLength(1);
        expect(done.artifacts[0].parts.map((part) => part.content)).toEqual([
          { $case: 'text', value: 'slept 600 ms' },
          { $case: 'data', value: expect.objectContaining({ slept_ms: 600 }) },
        ]);
      });

      it('cancelTask on the other replica stops a running sleep: the pod sees it, the task ends CANCELED', async () => {
        const task = (await send(await clientOf(0, binding), 'sleep', { ms: 30_000 })) as Task;
        const messageId = messageIdOfCall(task.id);
        await expect
          .poll(() => pod().logs.some((l) => l.msg === 'skill started' && l.message_id === messageId), {
            timeout: 5_000,
          })
          .toBe(true);
        const other = await clientOf(1, binding);
        const cancelled = await other.cancelTask({ tenant: '', id: task.id, metadata: undefined });
        expect(cancelled.status?.state).toBe(CANCELED);
        await expect
          .poll(() => pod().logs.some((l) => l.msg === 'skill cancelled' && l.message_id === messageId), {
            timeout: 5_000,
          })
          .toBe(true);
        // An ended task cannot be cancelled again.
        const again = await other.cancelTask({ tenant: '', id: task.id, metadata: undefined }).catch((e: Error) => e);
        expect((again as Error).name).toBe('TaskNotCancelableError');
      });

      it('another caller’s task is unknown to it (-32001), and listTasks shows only the caller’s own', async () => {
        const { apiKey: otherKey } = await env.stack
          .admin<{ key: string }>('apikey', 'create', '--agent', env.agentId)
          .then((created) => ({ apiKey: created.key }));
        const mine = (await send(await clientOf(0, binding), 'echo', { text: 'mine' })) as Task;
        const stranger = await clientOf(1, binding, otherKey);
        const refused = await stranger.getTask({ tenant: '', id: mine.id }).catch((e: Error) => e);
        expect((refused as Error).name).toBe('TaskNotFoundError');
        const theirs = (await send(stranger, 'echo', { text: 'theirs' })) as Task;
        const listed = await stranger.listTasks({
          tenant: '',
          contextId: '',
          status: 0,
          pageToken: '',
          statusTimestampAfter: undefined,
        });
        expect(listed.tasks.map((task) => task.id)).toEqual([theirs.id]);
        const own = await (
          await clientOf(1, binding)
        ).listTasks({
          tenant: '',
          contextId: '',
          status: 0,
          pageToken: '',
          statusTimestampAfter: undefined,
        });
        expect(own.tasks.map((task) => task.id)).toContain(mine.id);
        expect(own.tasks.map((task) => task.id)).not.toContain(theirs.id);
      });
    });
  }

  for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
    it(`sendMessageStream over ${binding}: the task, progress as status updates in order, the artifact, then COMPLETED`, async () => {
      const client = await clientOf(0, binding);
      const events: StreamResponse[] = [];
      for await (const event of client.sendMessageStream({
        tenant: '',
        message: {
          messageId: randomUUID(),
          contextId: '',
          taskId: '',
          role: 1,
          parts: [dataPart({ ms: 400, progress_every_ms: 100 })],
          metadata: { skill: 'sleep' },
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: undefined,
        metadata: undefined,
      }))
        events.push(event);
      const kinds = events.map((event) => event.payload?.$case);
      expect(kinds[0]).toBe('task');
      expect(kinds.slice(-2)).toEqual(['artifactUpdate', 'statusUpdate']);
      const task = events[0].payload!.value as Task;
      const progress = events.flatMap((event) =>
        event.payload?.$case === 'statusUpdate' && event.payload.value.metadata?.progress !== undefined
          ? [event.payload.value.metadata.progress as number]
          : [],
      );
      expect(progress.length).toBeGreaterThanOrEqual(3);
      expect(progress).toEqual([...progress].sort((a, b) => a - b));
      const last = events.at(-1)!.payload!.value as TaskStatusUpdateEvent;
      expect(last).toMatchObject({ taskId: task.id, status: { state: COMPLETED } });
      const artifact = (events.at(-2)!.payload!.value as TaskArtifactUpdateEvent).artifact!;
      expect(artifact.parts[0].content).toEqual({ $case: 'text', value: 'slept 400 ms' });
    });
  }

  it('subscribeToTask on the other replica follows a task another request started, to its end', async () => {
    const task = (await send(await clientOf(0, 'JSONRPC'), 'sleep', { ms: 800, progress_every_ms: 100 })) as Task;
    const events: StreamResponse[] = [];
    for await (const event of (await clientOf(1, 'HTTP+JSON')).resubscribeTask({ tenant: '', id: task.id }))
      events.push(event);
    expect(events[0].payload).toMatchObject({ $case: 'task', value: { id: task.id } });
    expect(events.at(-1)!.payload).toMatchObject({ $case: 'statusUpdate', value: { status: { state: COMPLETED } } });
    // An ended task cannot be subscribed to.
    const ended = (async () => {
      for await (const _ of (await clientOf(1, 'JSONRPC')).resubscribeTask({ tenant: '', id: task.id })) void _;
    })();
    await expect(ended).rejects.toThrow();
  });

  /** The user's answer to a task's question: a message naming the task, the form's fields as its data part. */
  const answer = (taskId: string, fields: Record<string, unknown>) => ({
    tenant: '',
    message: {
      messageId: randomUUID(),
      contextId: '',
      taskId,
      role: 1,
      parts: [dataPart(fields)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  });

  it('a skill that asks goes INPUT_REQUIRED with its question, and completes after the answer (another replica)', async () => {
    const task = (await send(await clientOf(0, 'JSONRPC'), 'test_input_required_result_elicitation', {})) as Task;
    const other = await clientOf(1, 'HTTP+JSON');
    await expect
      .poll(async () => (await other.getTask({ tenant: '', id: task.id })).status?.state, { timeout: 10_000 })
      .toBe(INPUT_REQUIRED);
    const asking = await other.getTask({ tenant: '', id: task.id });
    const question = asking.status!.message!;
    expect(question.parts[0].content).toEqual({ $case: 'text', value: 'What is your name?' });
    expect(question.parts[1].content).toMatchObject({
      $case: 'data',
      value: { method: 'elicitation/create', requestedSchema: { required: ['name'] } },
    });
    expect(question.metadata).toEqual({ inputRequestKey: 'user_name' });
    const answered = (await other.sendMessage(answer(task.id, { name: 'Ada' }))) as Task;
    expect(answered.id).toBe(task.id);
    await expect
      .poll(async () => (await other.getTask({ tenant: '', id: task.id })).status?.state, { timeout: 10_000 })
      .toBe(COMPLETED);
    const done = await other.getTask({ tenant: '', id: task.id });
    expect(done.artifacts[0].parts[0].content).toEqual({ $case: 'text', value: 'Hello, Ada!' });
    // The task asks nothing now: another answer is refused.
    const late = await other.sendMessage(answer(task.id, { name: 'Bob' })).catch((e: Error) => e);
    expect((late as Error).name).toBe('UnsupportedOperationError');
  });

  it('streamed: the stream ends at INPUT_REQUIRED; the answer streams on to the artifact and COMPLETED', async () => {
    const client = await clientOf(0, 'HTTP+JSON');
    const first: StreamResponse[] = [];
    for await (const event of client.sendMessageStream({
      tenant: '',
      message: {
        messageId: randomUUID(),
        contextId: '',
        taskId: '',
        role: 1,
        parts: [dataPart({})],
        metadata: { skill: 'test_input_required_result_elicitation' },
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: undefined,
      metadata: undefined,
    }))
      first.push(event);
    const task = first[0].payload!.value as Task;
    expect(first.at(-1)!.payload).toMatchObject({
      $case: 'statusUpdate',
      value: { status: { state: INPUT_REQUIRED } },
    });
    const rest: StreamResponse[] = [];
    for await (const event of (await clientOf(1, 'JSONRPC')).sendMessageStream(answer(task.id, { name: 'Grace' })))
      rest.push(event);
    expect(rest.at(-1)!.payload).toMatchObject({ $case: 'statusUpdate', value: { status: { state: COMPLETED } } });
    const artifact = rest.find((event) => event.payload?.$case === 'artifactUpdate')!.payload!
      .value as TaskArtifactUpdateEvent;
    expect(artifact.artifact!.parts[0].content).toEqual({ $case: 'text', value: 'Hello, Grace!' });
  });

  it('the same messageId, blocking or returnImmediately, on either replica, runs the counter skill once', async () => {
    const key = `a2a-task-${randomUUID()}`;
    const messageId = randomUUID();
    const task = (await send(await clientOf(0, 'JSONRPC'), 'counter', { key }, messageId)) as Task;
    const again = (await send(await clientOf(1, 'HTTP+JSON'), 'counter', { key }, messageId)) as Task;
    expect(again.id).toBe(task.id);
    const blocking = (await send(await clientOf(1, 'JSONRPC'), 'counter', { key }, messageId, false)) as Message;
    expect(blocking.parts[0].content).toEqual({ $case: 'text', value: '1' });
    const runs = pod().logs.filter((l) => l.msg === 'counter run' && l.counter_key === key);
    expect(runs).toHaveLength(1);
  });

  it('the same messageId with other arguments is refused, a task or not, whichever came first', async () => {
    // A2A's README, "A message is a call": -32602, and the counter never runs for the second.
    const rpc = async (messageId: string, key: string, returnImmediately: boolean) =>
      (await (
        await sendMessageRaw(
          `${env.gatewayUrls[1]}/a2a/${env.agentId}`,
          env.apiKey,
          { messageId, skill: 'counter', data: { key } },
          { returnImmediately },
        )
      ).json()) as RawSendAnswer;
    const prefix = `a2a-reused-${randomUUID()}`;
    for (const [first, second] of [
      ['task', 'task'],
      ['blocking', 'task'],
      ['task', 'blocking'],
    ] as const) {
      const messageId = randomUUID();
      const [used, other] = [`${prefix}-${first}-${second}-1`, `${prefix}-${first}-${second}-2`];
      const made = await rpc(messageId, used, first === 'task');
      expect(made.result?.task ?? made.result?.message).toBeDefined();
      const refused = await rpc(messageId, other, second === 'task');
      expect(refused.error, `${first} then ${second}`).toMatchObject({
        code: -32602,
        message: expect.stringContaining('another skill or other arguments'),
      });
      const runs = (key: string) => pod().logs.filter((l) => l.msg === 'counter run' && l.counter_key === key);
      await expect.poll(() => runs(used).length, { timeout: 10_000 }).toBe(1);
      expect(runs(other)).toHaveLength(0);
    }
  });

  it('a blocking message sent again to the other replica gets the same message: the reply rendered again', async () => {
    // Nothing keeps the answer text (idempotency/README.md): the other replica renders the stored
    // reply itself, its contextId signed with the shared secret as of the posting.
    const key = `a2a-again-${randomUUID()}`;
    const messageId = randomUUID();
    const first = (await send(await clientOf(0, 'JSONRPC'), 'counter', { key }, messageId, false)) as Message;
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const again = (await send(await clientOf(1, 'HTTP+JSON'), 'counter', { key }, messageId, false)) as Message;
    expect(again).toEqual(first);
    expect(first.parts[0].content).toEqual({ $case: 'text', value: '1' });
    expect(pod().logs.filter((l) => l.msg === 'counter run' && l.counter_key === key)).toHaveLength(1);
  });

  it('a blocking client that leaves stops nothing: the call runs on, and the messageId again gets its reply', async () => {
    // apps/gateway/src/a2a/README.md, "A client that leaves".
    const messageId = randomUUID();
    const sleeps = () => pod().logs.filter((l) => l.msg === 'skill started' && l.skill === 'sleep').length;
    const sleptBefore = sleeps();
    const left = new AbortController();
    const request = sendMessageRaw(
      `${env.gatewayUrls[0]}/a2a/${env.agentId}`,
      env.apiKey,
      { messageId, skill: 'sleep', data: { ms: 1_500 } },
      { signal: left.signal },
    );
    // The pod has the call (no other test runs a skill meanwhile).
    await expect.poll(sleeps, { timeout: 10_000 }).toBeGreaterThan(sleptBefore);
    left.abort();
    await expect(request).rejects.toThrow();
    const again = (await send(await clientOf(1, 'HTTP+JSON'), 'sleep', { ms: 1_500 }, messageId, false)) as Message;
    expect(again.parts[0].content).toEqual({ $case: 'text', value: 'slept 1500 ms' });
    const chatMessageId = messageIdOfCall(again.messageId);
    const of = (msg: string) => pod().logs.filter((l) => l.msg === msg && l.message_id === chatMessageId);
    expect(of('skill started')).toHaveLength(1);
    expect(of('skill cancelled')).toHaveLength(0);
  });

  it('a paged list: pageSize and nextPageToken walk the caller’s tasks', async () => {
    const { key } = await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', env.agentId);
    const client = await clientOf(0, 'JSONRPC', key);
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push(((await send(client, 'echo', { text: `page ${i}` })) as Task).id);
    const seen: string[] = [];
    let pageToken = '';
    do {
      const page = await client.listTasks({
        tenant: '',
        contextId: '',
        status: 0,
        pageSize: 2,
        pageToken,
        statusTimestampAfter: undefined,
      });
      seen.push(...page.tasks.map((task) => task.id));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(seen).toEqual(made);
  });
});
