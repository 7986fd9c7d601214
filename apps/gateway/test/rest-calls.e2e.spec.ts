import { messageIdOfCall } from '@mcpgw/contracts';
import { startTestStack, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from './support/sse-events';

/** The REST surface's long calls: `Prefer: respond-async` as a task, GET and DELETE by call id; SSE events. */
describe('REST invoke: async calls and event streams', () => {
  let env: TestStack;
  let base: string;
  const pod = () => env.stack.processes.find((p) => p.name.startsWith('agent-pod'))!;

  const invoke = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/api/v1/agents/${env.agentId}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-agent-api-key': env.apiKey, ...headers },
      body: JSON.stringify(body),
    });
  const call = async (location: string, method = 'GET', key = env.apiKey) => {
    const response = await fetch(`${base}${location}`, { method, headers: { 'x-agent-api-key': key } });
    return { status: response.status, body: (await response.json()) as any };
  };

  beforeAll(async () => {
    // The pod's debug lines tell when a skill starts and is cancelled.
    env = await startTestStack({ podEnv: { LOG_LEVEL: 'debug' } });
    base = env.gatewayUrls[0];
  });

  afterAll(async () => {
    await env?.stop();
  });

  it("GET …/tools lists the catalogue with its schemas; the grant twin only the grant's tools", async () => {
    const listed = await fetch(`${base}/api/v1/agents/${env.agentId}/tools`, {
      headers: { 'x-agent-api-key': env.apiKey },
    });
    expect(listed.status).toBe(200);
    const { tools } = (await listed.json()) as { tools: any[] };
    expect(tools.find((t) => t.name === 'web_search')).toMatchObject({
      input_schema: { required: ['query'] },
      output_schema: { required: ['results'] },
      side_effect_class: 'read',
    });
    const { grant } = await env.stack.admin<{ grant: string }>(
      'grant',
      'mint',
      '--workspace',
      'demo',
      '--agent',
      env.agentId,
      '--task',
      'rest-tools',
      '--tools',
      'echo',
    );
    const granted = await fetch(`${base}/workspaces/demo/agents/${env.agentId}/tools`, {
      headers: { authorization: `Bearer ${grant}` },
    });
    expect(((await granted.json()) as { tools: any[] }).tools.map((t) => t.name)).toEqual(['echo']);
    expect((await fetch(`${base}/api/v1/agents/${env.agentId}/tools`)).status).toBe(401);
  });

  it('respond-async: 202 with Location; GET gives the state, then the result', async () => {
    const response = await invoke(
      { tool: 'web_search', arguments: { query: 'async', max_results: 1 } },
      { prefer: 'respond-async' },
    );
    expect(response.status).toBe(202);
    expect(response.headers.get('preference-applied')).toBe('respond-async');
    const location = response.headers.get('location')!;
    expect(location).toMatch(/^\/api\/v1\/calls\/call_[0-9a-f]{32}$/);
    const accepted = (await response.json()) as any;
    expect(accepted).toMatchObject({ call_id: location.split('/').pop(), tool: 'web_search', status: 'working' });
    await expect
      .poll(async () => (await call(location)).body.status, { timeout: 10_000, interval: 100 })
      .toBe('completed');
    const done = await call(location);
    expect(done.status).toBe(200);
    expect(done.body.result).toMatchObject({ is_error: false, output: { results: [{ title: 'Result 1 for async' }] } });
    // Only its caller finds it.
    const other = await env.addAgent('rest-calls-other');
    expect((await call(location, 'GET', other.apiKey)).status).toBe(404);
    expect((await call('/api/v1/calls/call_00000000000000000000000000000000')).body).toMatchObject({
      status: 404,
      type: 'urn:mcpgw:problem:not-found',
    });
    expect((await call(location, 'GET', 'bak_wrong')).status).toBe(401);
  });

  it('DELETE cancels the call on the bus: the pod stops the skill; GET shows it cancelled', async () => {
    const response = await invoke({ tool: 'sleep', arguments: { ms: 60_000 } }, { prefer: 'respond-async' });
    expect(response.status).toBe(202);
    const location = response.headers.get('location')!;
    const messageId = messageIdOfCall(location.split('/').pop()!);
    // The pod has the call before it is cancelled.
    await expect
      .poll(() => pod().logs.some((l: any) => l.msg === 'skill started' && l.message_id === messageId), {
        timeout: 5_000,
      })
      .toBe(true);
    const cancelled = await call(location, 'DELETE');
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    await expect
      .poll(() => pod().logs.some((l: any) => l.msg === 'skill cancelled' && l.message_id === messageId), {
        timeout: 5_000,
      })
      .toBe(true);
    expect((await call(location)).body.status).toBe('cancelled');
    expect(pod().logs.some((l: any) => l.msg === 'skill answered' && l.message_id === messageId)).toBe(false);
  });

  it('Accept: text/event-stream: progress and log events in order, then the result', async () => {
    const response = await invoke(
      { tool: 'sleep', arguments: { ms: 600, progress_every_ms: 100 } },
      { accept: 'text/event-stream' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readEvents(response);
    const progress = events.filter((e) => e.event === 'progress').map((e) => (e.data as any).progress as number);
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(events.some((e) => e.event === 'log')).toBe(true);
    const last = events.at(-1)!;
    expect(last.event).toBe('result');
    expect(last.data).toMatchObject({ tool: 'sleep', output: { slept_ms: 600 }, is_error: false });
  });

  it('an event stream ends with an error event carrying the problem', async () => {
    const events = await readEvents(await invoke({ tool: 'no_such_tool' }, { accept: 'text/event-stream' }));
    expect(events).toEqual([{ event: 'error', data: expect.objectContaining({ status: 404, code: -32601 }) }]);
  });
});
