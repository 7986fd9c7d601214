import { AgentInbox, CallCancelled, CallEvents, ReplicaReplies } from '@mcpgw/contracts';
import { describe, expect, it } from 'vitest';
import { admit } from './bus-edge';
import { busMeter } from './bus-meter';
import { encodeJson } from './json';

const dropped = (family: string) => [...busMeter.dropped()].find(([labels]) => labels.family === family)?.[1] ?? 0;

describe('the bus edge', () => {
  it('names subjects from the one declaration', () => {
    expect(CallEvents.subject('p', 'a1', 'm1')).toBe('p.calls.a1.m1.events');
    expect(CallEvents.at('a1', 'm1').subject('p')).toBe('p.calls.a1.m1.events');
    expect(ReplicaReplies.exact('p.ms.replicas.r1.replies.a1').subject('other')).toBe('p.ms.replicas.r1.replies.a1');
    expect(CallCancelled.subject('p')).toBe(`p.${CallCancelled.pattern}`);
  });

  it('lets a valid payload through, as it is', () => {
    const parsed = admit(CallCancelled, encodeJson({ key: 'k1' }));
    expect(parsed).toEqual({ ok: true, value: { key: 'k1' } });
  });

  it('drops what is not JSON or breaks the contract, and counts it', () => {
    const before = dropped(AgentInbox.family);
    expect(admit(AgentInbox, new TextEncoder().encode('{oops')).ok).toBe(false);
    expect(admit(AgentInbox, encodeJson({ type: 'chat_message', id: 'not-a-uuid' })).ok).toBe(false);
    expect(dropped(AgentInbox.family)).toBe(before + 2);
  });

  it('shows a family it listens on at 0 before its first drop (else the first drop is no increase to Prometheus)', () => {
    const family = 'test.listening.only';
    expect([...busMeter.dropped()].some(([labels]) => labels.family === family)).toBe(false);
    busMeter.listening(family);
    expect([...busMeter.dropped()]).toContainEqual([{ family }, 0]);
    busMeter.drop(family);
    busMeter.listening(family);
    expect(dropped(family)).toBe(1);
  });

  it('checks call events by their type', () => {
    const event = { type: 'progress', in_reply_to: '4f0c1d4e-8a4b-4c1e-9a55-0d8f8e6b7a10', progress: 1 };
    expect(admit(CallEvents, encodeJson(event)).ok).toBe(true);
    expect(admit(CallEvents, encodeJson({ ...event, progress: 'far' })).ok).toBe(false);
  });
});
