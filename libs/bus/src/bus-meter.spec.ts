import { describe, expect, it } from 'vitest';
import type { NatsConnection } from 'nats';
import { BusMeter, meterConnection, subjectFamily } from './bus-meter';

describe('subjectFamily', () => {
  it.each([
    ['_INBOX.abc.def', 'reply'],
    ['$JS.ACK.MCPGW_AGENT_INBOX.agent_demo.1.2.3.4.0', 'js.ack'],
    ['$JS.API.CONSUMER.MSG.NEXT.MCPGW_AGENT_INBOX.agent_demo', 'js.pull'],
    ['$JS.API.STREAM.INFO.X', 'js.api'],
    ['mcpgw.ms.messages.post_and_wait', 'ms.messages.post_and_wait'],
    ['mcpgw.agents.demo-agent.inbox', 'agents.*.inbox'],
    ['mcpgw.calls.7b0c2a4e-0000-4000-8000-000000000000.stored', 'calls.*.stored'],
    ['mcpgw.ms.replicas.0123abcd.replies.demo-agent', 'ms.replicas.*.replies.*'],
    ['mcpgw.calls.demo-agent.7b0c2a4e-0000-4000-8000-000000000000.events', 'calls.*.*.events'],
    ['mcpgw.ms.agents.demo-agent.replies', 'ms.agents.*.replies'],
    ['mcpgw.registry.agents.demo-agent.register', 'registry.agents.*.register'],
    ['other.subject', 'other'],
  ])('%s is %s', (subject, family) => {
    expect(subjectFamily(subject, 'mcpgw')).toBe(family);
  });
});

describe('BusMeter', () => {
  it('counts per direction and family', () => {
    const meter = new BusMeter();
    meter.count('out', 'reply');
    meter.count('out', 'reply');
    meter.count('in', 'reply');
    expect([...meter.entries()]).toEqual([
      [{ direction: 'out', family: 'reply' }, 2],
      [{ direction: 'in', family: 'reply' }, 1],
    ]);
  });
});

describe('meterConnection', () => {
  it('counts what the protocol handler publishes and what it is delivered', () => {
    const protocol = {
      publish: (_subject: string) => undefined,
      processMsg: (_msg: { subject: Uint8Array }, _data: Uint8Array) => undefined,
    };
    const meter = new BusMeter();
    meterConnection({ protocol } as unknown as NatsConnection, 'mcpgw', meter);
    protocol.publish('mcpgw.ms.messages.post_and_wait');
    const deliver = (subject: string) =>
      protocol.processMsg({ subject: new TextEncoder().encode(subject) }, new Uint8Array());
    deliver('_INBOX.abc.1');
    deliver('mcpgw.agents.a1.inbox');
    deliver('_INBOX');
    deliver('_INBOXES.x');
    expect([...meter.entries()]).toEqual([
      [{ direction: 'out', family: 'ms.messages.post_and_wait' }, 1],
      [{ direction: 'in', family: 'reply' }, 1],
      [{ direction: 'in', family: 'agents.*.inbox' }, 1],
      [{ direction: 'in', family: 'other' }, 2],
    ]);
  });

  it('refuses a client whose internals it does not know', () => {
    expect(() => meterConnection({} as NatsConnection, 'mcpgw')).toThrow(/internals changed/);
  });
});
