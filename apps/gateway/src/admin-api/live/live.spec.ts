import { EventEmitter } from 'node:events';
import { checkActivity, type ActivityEvent } from '@mcpgw/contracts';
import type { BusClient } from '@mcpgw/bus';
import type { FastifyReply } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ACTIVITY_INTERVAL_MS, CallActivityBatcher } from '../../calls/call-activity';
import { LiveStreams, SSE_MAX_UNREAD, SseStream } from './sse-stream';

/** A raw response that takes writes until `full`, then says its buffer is full (as a socket whose client stopped reading). */
function fakeReply(full = Infinity) {
  const raw = Object.assign(new EventEmitter(), {
    written: [] as string[],
    destroyed: false,
    ended: false,
    writeHead: vi.fn(),
    write(chunk: string) {
      raw.written.push(chunk);
      return raw.written.length < full;
    },
    end() {
      raw.ended = true;
      raw.emit('close');
    },
    destroy() {
      raw.destroyed = true;
      raw.emit('close');
    },
  });
  const reply = { raw, hijack: vi.fn(), request: { id: 'req-1' } } as unknown as FastifyReply;
  return { reply, raw };
}

describe('SseStream', () => {
  it('writes events as `event:` and one `data:` line, and ends', () => {
    const { reply, raw } = fakeReply();
    const stream = new SseStream(reply);
    stream.send('progress', { progress: 1, message: 'a\nb' });
    stream.end('result', '{"ok":true}');
    expect(raw.written.slice(1)).toEqual([
      'event: progress\ndata: {"progress":1,"message":"a\\nb"}\n\n',
      'event: result\ndata: {"ok":true}\n\n',
    ]);
    expect(raw.ended).toBe(true);
    expect(stream.open).toBe(false);
  });

  it('cuts a client that stops reading after SSE_MAX_UNREAD events, rather than queue more', () => {
    const { reply, raw } = fakeReply(10);
    const stream = new SseStream(reply);
    const closed = vi.fn();
    stream.onClose(closed);
    for (let i = 0; i < SSE_MAX_UNREAD * 3; i++) stream.send('call', { i });
    expect(raw.destroyed).toBe(true);
    expect(closed).toHaveBeenCalledOnce();
    // Bounded: nothing written past the limit (without the bound: every event queued).
    expect(raw.written.length).toBeLessThanOrEqual(10 + SSE_MAX_UNREAD);
  });

  it('counts again once the client has read (drain)', () => {
    const { reply, raw } = fakeReply(2);
    const stream = new SseStream(reply);
    for (let i = 0; i < SSE_MAX_UNREAD - 5; i++) stream.send('call', { i });
    raw.emit('drain');
    for (let i = 0; i < SSE_MAX_UNREAD - 5; i++) stream.send('call', { i });
    expect(raw.destroyed).toBe(false);
  });
});

describe('LiveStreams', () => {
  it('says bye to every open stream and ends it (the drain)', () => {
    const streams = new LiveStreams();
    const replies = [fakeReply(), fakeReply()];
    for (const { reply } of replies) streams.start(reply);
    expect(streams.size).toBe(2);
    streams.endAll();
    expect(streams.size).toBe(0);
    for (const { raw } of replies) {
      expect(raw.written.at(-1)).toBe('event: bye\ndata: {"reason":"the gateway is shutting down"}\n\n');
      expect(raw.ended).toBe(true);
    }
  });
});

describe('CallActivityBatcher', () => {
  afterEach(() => vi.useRealTimers());
  const call = (outcome: string) => ({
    agent_id: 'a',
    tool: 't',
    surface: 'agent',
    caller_id: 'apikey:k',
    call_id: 'call_1',
    outcome,
    duration_ms: 3,
    at: new Date().toISOString(),
  });

  it('tells the calls of a second in one message: 100 listed, the rest counted; nothing when idle', () => {
    vi.useFakeTimers();
    const sent: ActivityEvent[] = [];
    const bus = { publish: (_to: unknown, payload: ActivityEvent) => sent.push(payload) } as unknown as BusClient;
    const batcher = new CallActivityBatcher(bus);
    for (let i = 0; i < 150; i++) batcher.ended(call(i % 2 ? 'ok' : 'agent_timeout'));
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(ACTIVITY_INTERVAL_MS);
    expect(sent).toHaveLength(1);
    const [told] = sent as Extract<ActivityEvent, { kind: 'calls' }>[];
    expect(told.calls).toHaveLength(100);
    expect(told.unlisted).toEqual({ calls: 50, errors: 25 });
    expect(checkActivity(JSON.parse(JSON.stringify(told))).ok).toBe(true);
    vi.advanceTimersByTime(ACTIVITY_INTERVAL_MS * 5);
    expect(sent).toHaveLength(1);
  });
});
