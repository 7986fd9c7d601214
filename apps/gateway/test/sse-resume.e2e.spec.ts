import { connectMcp, startTestStack, type TestStack } from '@mcpgw/devstack';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * SSE resumability (MCP 2025-11-25) with two gateway replicas: every event of
 * a session's stream is stored in PostgreSQL, so a client that lost a stream
 * (the agent let it poll, the network broke) resumes it with `Last-Event-ID`
 * on the other replica and gets exactly what it missed; event ids name their
 * stream; a stream serves one connection at a time (409); a stream is its
 * session's only (404 elsewhere); and the bounds hold.
 */
interface SseEvent {
  id?: string;
  data: string;
}

/** Reads an SSE response: `until` decides when to stop (default: the end of the stream). */
async function readEvents(
  response: Response,
  until: (events: SseEvent[]) => boolean = () => false,
): Promise<{ events: SseEvent[]; ended: boolean; reader: ReadableStreamDefaultReader<Uint8Array> }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { events, ended: true, reader };
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event: SseEvent = { data: '' };
      let fields = 0;
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) {
          event.id = line.slice(4);
          fields++;
        }
        if (line.startsWith('data: ') || line === 'data:') {
          event.data += line.replace(/^data: ?/, '');
          fields++;
        }
      }
      if (fields) events.push(event);
    }
    if (until(events)) return { events, ended: false, reader };
  }
}

const messages = (events: SseEvent[]) => events.filter((e) => e.data.trim()).map((e) => JSON.parse(e.data));

describe('resuming SSE streams on any replica (2025-11-25)', () => {
  let env: TestStack;

  const post = (gateway: number, body: object, session?: string) =>
    fetch(env.mcpUrl(gateway), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-agent-api-key': env.apiKey,
        'mcp-protocol-version': '2025-11-25',
        ...(session ? { 'mcp-session-id': session } : {}),
      },
      body: JSON.stringify(body),
    });
  const resume = (gateway: number, session: string, lastEventId: string) =>
    fetch(env.mcpUrl(gateway), {
      headers: {
        accept: 'text/event-stream',
        'x-agent-api-key': env.apiKey,
        'mcp-protocol-version': '2025-11-25',
        'mcp-session-id': session,
        'last-event-id': lastEventId,
      },
    });
  /** A 2025-11-25 session whose client takes sampling: its tools/calls answer as event streams. */
  const session = async () => {
    const init = await post(0, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: { sampling: {} },
        clientInfo: { name: 't', version: '1' },
      },
    });
    const id = init.headers.get('mcp-session-id')!;
    await init.text();
    await (await post(0, { jsonrpc: '2.0', method: 'notifications/initialized' }, id)).text();
    return id;
  };
  const call = (gateway: number, sessionId: string, name: string, args: object, id = 1, meta: object = {}) =>
    post(
      gateway,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: meta } },
      sessionId,
    );

  beforeAll(async () => {
    env = await startTestStack({
      gateways: 2,
      gatewayEnv: { SSE_REPLAY_MAX_EVENTS: '4', SSE_REPLAY_MAX_BYTES: '2048', SSE_REPLAY_TTL_SECONDS: '10' },
    });
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('the agent lets the client poll: the stream closes before the result, which a GET on the other replica replays', async () => {
    const sessionId = await session();
    const first = await readEvents(await call(0, sessionId, 'test_reconnection', {}));
    expect(first.ended).toBe(true);
    expect(messages(first.events)).toEqual([]);
    const priming = first.events.at(-1)!.id!;
    const [streamId] = /^(.*)-1$/.exec(priming)!.slice(1);

    const resumed = await resume(1, sessionId, priming);
    expect(resumed.status).toBe(200);
    const rest = await readEvents(resumed);
    expect(rest.ended).toBe(true);
    expect(messages(rest.events)).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        result: {
          content: [{ type: 'text', text: 'Reconnection test completed' }],
          _meta: { 'mcpgw/callId': expect.stringMatching(/^call_[0-9a-f]{32}$/) },
        },
      },
    ]);
    // The result's event id names the same stream, next in line.
    expect(rest.events.map((e) => e.id)).toEqual([`${streamId}-2`]);
  });

  it('one connection per stream (409), and a broken one resumes on the other replica with what it missed, in order', async () => {
    const sessionId = await session();
    const token = 'p1';
    const controller = new AbortController();
    const response = await post(
      0,
      {
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'sleep', arguments: { ms: 1500, progress_every_ms: 250 }, _meta: { progressToken: token } },
      },
      sessionId,
    );
    const head = await readEvents(response, (events) =>
      messages(events).some((m) => m.method === 'notifications/progress'),
    );
    const lastSeen = head.events.at(-1)!.id!;
    // The POST's connection still holds the stream.
    const busy = await resume(1, sessionId, lastSeen);
    expect(busy.status).toBe(409);
    expect((await busy.json()).error.message).toMatch(/active connection/);
    // The network breaks; the call goes on.
    await head.reader.cancel();
    controller.abort();
    let resumed: Response | undefined;
    for (let i = 0; i < 40 && resumed?.status !== 200; i++) {
      resumed = await resume(1, sessionId, lastSeen);
      if (resumed.status !== 200) await resumed.text();
      if (resumed.status === 409) await new Promise((r) => setTimeout(r, 100));
    }
    expect(resumed!.status).toBe(200);
    const rest = await readEvents(resumed!);
    const [streamId, seen] = /^(.*)-(\d+)$/.exec(lastSeen)!.slice(1);
    const seqs = rest.events.map((e) => Number(/-(\d+)$/.exec(e.id!)![1]));
    expect(rest.events.every((e) => e.id!.startsWith(`${streamId}-`))).toBe(true);
    // Exactly what came after the last event seen: no repeat, no hole, ending with the result.
    expect(seqs).toEqual(seqs.map((_, i) => Number(seen) + 1 + i));
    const got = messages(rest.events);
    expect(got.at(-1)).toMatchObject({ id: 5, result: { content: [{ type: 'text', text: 'slept 1500 ms' }] } });
    expect(
      got.slice(0, -1).every((m) => m.method === 'notifications/progress' || m.method === 'notifications/message'),
    ).toBe(true);
  });

  it('a stream is its session’s: another session, or an id that is not ours, gets 404', async () => {
    const mine = await session();
    const first = await readEvents(await call(0, mine, 'test_reconnection', {}));
    const priming = first.events.at(-1)!.id!;
    const other = await session();
    for (const [sessionId, id] of [
      [other, priming],
      [mine, 'not-an-event-id'],
      [mine, `${crypto.randomUUID()}-1`],
    ]) {
      const refused = await resume(1, sessionId, id);
      expect(refused.status).toBe(404);
      expect((await refused.json()).error.code).toBe(-32600);
    }
    // The right session still gets its result.
    expect(messages((await readEvents(await resume(0, mine, priming))).events)).toHaveLength(1);
  });

  it('keeps at most SSE_REPLAY_MAX_EVENTS of a stream: resuming from before them is refused, from within them works', async () => {
    const sessionId = await session();
    // 8 progress notifications and 8 log lines, then the result: more than the 4 kept.
    const all = await readEvents(
      await call(0, sessionId, 'sleep', { ms: 800, progress_every_ms: 100 }, 9, { progressToken: 't' }),
    );
    expect(all.ended).toBe(true);
    const ids = all.events.map((e) => e.id!);
    const tooOld = await resume(1, sessionId, ids[0]);
    expect(tooOld.status).toBe(404);
    expect((await tooOld.json()).error.message).toMatch(/no longer stored/);
    const recent = await readEvents(await resume(1, sessionId, ids.at(-3)!));
    expect(recent.events.map((e) => e.id)).toEqual(ids.slice(-2));
  });

  it('keeps at most SSE_REPLAY_MAX_BYTES of a stream: an event over it alone is not stored, and a resume before it is refused', async () => {
    const sessionId = await session();
    const long = 'x'.repeat(3000);
    const all = await readEvents(await call(0, sessionId, 'echo', { text: long }, 11, { progressToken: 'b' }));
    expect(messages(all.events).at(-1).result.content[0].text).toBe(long);
    const refused = await resume(1, sessionId, all.events[0].id!);
    expect(refused.status).toBe(404);
    expect((await refused.json()).error.message).toMatch(/no longer stored/);
  });

  it('keeps a stream SSE_REPLAY_TTL_SECONDS after its last use: then a resume is 404', async () => {
    const sessionId = await session();
    const first = await readEvents(await call(0, sessionId, 'test_reconnection', {}));
    const priming = first.events.at(-1)!.id!;
    const started = Date.now();
    let status = 0;
    const statuses: number[] = [];
    // The purge runs every 5 s at a 10 s TTL: gone between 10 and about 16 s after the stream was let go.
    while (Date.now() - started < 25_000) {
      // A resume that succeeds replays the result and ends; its events still age out.
      const answer = await resume(1, sessionId, priming);
      status = answer.status;
      statuses.push(status);
      await answer.text();
      if (status === 404) break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    expect(status).toBe(404);
    // Resumable until then (each resume replays the result again).
    expect(statuses[0]).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_000);
  }, 90_000);

  it('the official SDK client resumes by itself: its POST stream closes, its GET with Last-Event-ID lands on the other replica', async () => {
    const [first, second] = [env.mcpUrl(0), env.mcpUrl(1)];
    const gets: string[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(first), {
      requestInit: { headers: { 'X-Agent-API-Key': env.apiKey } },
      // GETs (the resumption) go to the other replica.
      fetch: (url, init) => {
        if ((init?.method ?? 'GET') === 'GET') {
          gets.push(new Headers(init?.headers).get('last-event-id') ?? '');
          return fetch(String(url).replace(first, second), init);
        }
        return fetch(url, init);
      },
      reconnectionOptions: {
        initialReconnectionDelay: 50,
        maxReconnectionDelay: 500,
        reconnectionDelayGrowFactor: 1.5,
        maxRetries: 5,
      },
    });
    const client = new Client({ name: 'resume-probe', version: '1.0.0' }, { capabilities: { sampling: {} } });
    await client.connect(transport);
    const result = await client.callTool({ name: 'test_reconnection', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'Reconnection test completed' }]);
    expect(gets.some((id) => /-1$/.test(id))).toBe(true);
    await client.close();
    // And the plain helper still works against either replica.
    const again = await connectMcp(second, env.apiKey);
    expect((await again.client.callTool({ name: 'echo', arguments: { text: 'x' } })).content).toEqual([
      { type: 'text', text: 'x' },
    ]);
    await again.close();
  });

  it('a session’s listen stream resumes on the other replica: the missed list_changed, then the next ones', async () => {
    const sessionId = await session();
    const listen = (gateway: number, lastEventId?: string) =>
      fetch(env.mcpUrl(gateway), {
        headers: {
          accept: 'text/event-stream',
          'x-agent-api-key': env.apiKey,
          'mcp-protocol-version': '2025-11-25',
          'mcp-session-id': sessionId,
          ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
        },
      });
    const changed = (events: SseEvent[]) =>
      messages(events).some((m) => m.method === 'notifications/tools/list_changed');
    const first = await listen(0);
    const registered = env.stack.startPod({ POD_ID: 'pod-listen-1' });
    const head = await readEvents(first, changed);
    await head.reader.cancel();
    await registered;
    const [priming, notice] = head.events.map((e) => e.id!);
    const streamId = priming.replace(/-1$/, '');
    expect(notice).toBe(`${streamId}-2`);

    const resumed = await listen(1, priming);
    expect(resumed.status).toBe(200);
    const replayed = await readEvents(resumed, (events) => events.length >= 1);
    expect(replayed.events.map((e) => e.id)).toEqual([notice]);
    expect(changed(replayed.events)).toBe(true);
    // The resumed connection is the stream now: the next change comes on it, numbered on.
    const registeredAgain = env.stack.startPod({ POD_ID: 'pod-listen-2' });
    const reader = replayed.reader;
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('list_changed')) text += decoder.decode((await reader.read()).value);
    expect(text).toContain(`id: ${streamId}-3`);
    await reader.cancel();
    await registeredAgain;
  });
});
