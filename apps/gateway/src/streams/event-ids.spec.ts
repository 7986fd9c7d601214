import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventId, parseEventId } from './event-ids';

describe('SSE event ids', () => {
  it('name their stream and position, and read back', () => {
    const stream = randomUUID();
    expect(parseEventId(eventId(stream, 1))).toEqual({ streamId: stream, seq: 1 });
    expect(parseEventId(` ${eventId(stream, 42)} `)).toEqual({ streamId: stream, seq: 42 });
  });

  it('are unique across the streams of a session', () => {
    const ids = new Set([randomUUID(), randomUUID(), randomUUID()].flatMap((s) => [1, 2, 3].map((n) => eventId(s, n))));
    expect(ids.size).toBe(9);
  });

  it.each([
    undefined,
    '',
    'abc',
    '12',
    `${randomUUID()}`,
    `${randomUUID()}-0`,
    `${randomUUID()}-x`,
    `${randomUUID()}-1234567890`,
    `${randomUUID().toUpperCase()}-1`,
  ])('refuse what is not one of ours: %s', (value) => expect(parseEventId(value)).toBeUndefined());
});
