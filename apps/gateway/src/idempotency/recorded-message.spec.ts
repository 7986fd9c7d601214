import type { ChatMessage } from '@mcpgw/contracts';
import { describe, expect, it } from 'vitest';
import { messageToJoin, recordedOf } from './recorded-message';

const message = (fields: Partial<ChatMessage>): ChatMessage =>
  ({
    type: 'chat_message',
    id: '7c1d2f54-0000-4000-8000-000000000001',
    agent_id: 'demo-agent',
    sender: 'gateway',
    created_at: '2026-12-07T13:00:00.000Z',
    text: 'echo',
    ...fields,
  }) as ChatMessage;

describe('what a record keeps of the message', () => {
  it('an A2A claim keeps the id and time; the other surfaces keep the message', () => {
    const posted = message({});
    expect(recordedOf('a2a', posted)).toEqual({ id: posted.id, created_at: posted.created_at });
    for (const surface of ['agent', 'grant', 'rest']) expect(recordedOf(surface, posted)).toBe(posted);
  });

  it('a join posts the recorded message, or its own under the recorded id and time, with no call id of its own', () => {
    const first = message({ id: 'c0ffee00-0000-5000-8000-000000000001', created_at: '2026-12-07T12:00:00.000Z' });
    const own = message({ call_id: 'call_named_by_surface_b', created_at: '2026-12-07T13:30:00.000Z' });
    expect(messageToJoin(first, own)).toBe(first);
    const joined = messageToJoin(recordedOf('a2a', first), own);
    expect(joined).toEqual({ ...own, id: first.id, created_at: first.created_at, call_id: undefined });
    expect('call_id' in joined).toBe(false);
  });
});
