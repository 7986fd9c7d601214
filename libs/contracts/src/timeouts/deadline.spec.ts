import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ChatMessage } from '../envelopes/chat-message';
import { validateByDecorators } from '../envelopes/decorated';
import { parseAs, parseEnvelope } from '../envelopes/validate';
import { CALL_BUDGET_META_KEY, callDeadlineOf, withCallBudget } from './call-budget';
import { Deadline, DeadlineExceededError } from './deadline';

describe('Deadline', () => {
  it('counts down from after(ms), and expires', async () => {
    const deadline = Deadline.after(40);
    expect(deadline.expired).toBe(false);
    expect(deadline.remainingMs()).toBeGreaterThan(0);
    expect(deadline.remainingMs()).toBeLessThanOrEqual(40);
    await delay(50);
    expect(deadline.expired).toBe(true);
    expect(deadline.remainingMs()).toBe(0);
    expect(deadline.toWire()).toBe(0);
  });

  it('takes a negative or missing budget as none left', () => {
    expect(Deadline.after(-5).expired).toBe(true);
    expect(Deadline.after(Number.NaN).expired).toBe(true);
  });

  it('travels as the time left, in whole milliseconds, anchored again by the receiver', () => {
    const sent = Deadline.after(1_000).toWire();
    expect(Number.isInteger(sent)).toBe(true);
    expect(sent).toBeGreaterThan(990);
    expect(sent).toBeLessThanOrEqual(1_000);
    const received = Deadline.fromWire(sent)!;
    expect(received.remainingMs()).toBeLessThanOrEqual(sent);
    expect(received.remainingMs()).toBeGreaterThan(980);
  });

  it.each([undefined, null, -1, '100', Number.POSITIVE_INFINITY, {}])('reads %j on the wire as no deadline', (v) => {
    expect(Deadline.fromWire(v)).toBeUndefined();
  });

  it('min is the earlier of two', () => {
    const soon = Deadline.after(10);
    const later = Deadline.after(10_000);
    expect(later.min(soon)).toBe(soon);
    expect(soon.min(later)).toBe(soon);
    expect(soon.min(undefined)).toBe(soon);
  });

  it('aborts a controller at the deadline, with DeadlineExceededError, unless cleared first', async () => {
    const fires = new AbortController();
    Deadline.after(20).abortOnExpiry(fires);
    const cleared = new AbortController();
    Deadline.after(20).abortOnExpiry(cleared)();
    await delay(40);
    expect(fires.signal.aborted).toBe(true);
    expect(fires.signal.reason).toBeInstanceOf(DeadlineExceededError);
    const own = new AbortController();
    Deadline.after(0).abortOnExpiry(own, () => 'its own reason');
    expect(own.signal.reason).toBe('its own reason');
    expect(cleared.signal.aborted).toBe(false);
  });

  it('aborts at once when already past, and offers a plain signal', async () => {
    const late = new AbortController();
    Deadline.after(0).abortOnExpiry(late);
    expect(late.signal.aborted).toBe(true);
    const signal = Deadline.after(10).signal();
    expect(signal.aborted).toBe(false);
    await delay(30);
    expect(signal.aborted).toBe(true);
  });
});

describe('the call budget on a chat_message', () => {
  const chat = () => ({
    type: 'chat_message' as const,
    id: randomUUID(),
    agent_id: 'demo-agent',
    sender: { kind: 'mcp_client' as const, id: 'key1' },
    created_at: new Date().toISOString(),
    meta: { credentials: ['crm'] },
  });

  it('is written into meta, next to the other hints, without changing the message', () => {
    const message = chat();
    const posted = withCallBudget(message, Deadline.after(5_000));
    expect(posted.meta).toEqual({ credentials: ['crm'], [CALL_BUDGET_META_KEY]: expect.any(Number) });
    expect(message.meta).toEqual({ credentials: ['crm'] });
    expect(callDeadlineOf(posted)!.remainingMs()).toBeGreaterThan(4_900);
    expect(parseEnvelope(posted).ok).toBe(true);
  });

  it('is absent from an older sender, which keeps working', () => {
    const { meta: _meta, ...old } = chat();
    expect(callDeadlineOf(old)).toBeUndefined();
    expect(parseEnvelope(old).ok).toBe(true);
  });

  it.each([
    [{ timeout_ms: 0 }, true],
    [{ timeout_ms: 1500 }, true],
    [{ timeout_ms: 12.5 }, true],
    [{ timeout_ms: -1 }, false],
    [{ timeout_ms: '1000' }, false],
    [{ timeout_ms: null }, false],
    [{ other: 'x' }, true],
  ])('meta %j is accepted: %s (the schema and the decorators agree)', (meta, ok) => {
    const plain = { ...chat(), meta };
    expect(parseAs(ChatMessage, plain).ok).toBe(ok);
    expect(validateByDecorators(ChatMessage, plain).ok).toBe(ok);
  });
});
