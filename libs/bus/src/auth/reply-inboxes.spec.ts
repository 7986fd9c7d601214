import { BusPattern, CallEvents, ReplicaReplies } from '@mcpgw/contracts';
import { describe, expect, it } from 'vitest';
import { askerInboxes, replyAllowed } from './reply-inboxes';

describe('the answer to a request goes only to the asker', () => {
  it("a gateway-only operation is answered in the gateway's inbox only", () => {
    expect(askerInboxes('p', BusPattern.PostAndWait, 'p.ms.messages.post_and_wait')).toEqual(['_INBOX.p.gateway.>']);
    expect(replyAllowed('p', BusPattern.PostAndWait, 'p.ms.messages.post_and_wait', '_INBOX.p.gateway.Ab.1')).toBe(
      true,
    );
    expect(replyAllowed('p', BusPattern.PostAndWait, 'p.ms.messages.post_and_wait', '_INBOX.p.agent.a1.Ab.1')).toBe(
      false,
    );
  });

  it('an agent-scoped operation is answered in the inbox of the agent its subject names', () => {
    const register = 'p.registry.agents.a1.register';
    expect(replyAllowed('p', BusPattern.RegisterAgent, register, '_INBOX.p.agent.a1.Xy.7')).toBe(true);
    expect(replyAllowed('p', BusPattern.RegisterAgent, register, '_INBOX.p.agent.b2.Xy.7')).toBe(false);
    expect(replyAllowed('p', BusPattern.RegisterAgent, register, '_INBOX.p.gateway.Xy.7')).toBe(false);
    const replies = ReplicaReplies.subject('p', 'r1', 'a1');
    expect(replyAllowed('p', ReplicaReplies.family, replies, '_INBOX.p.agent.a1.Xy.7')).toBe(true);
    expect(replyAllowed('p', ReplicaReplies.family, replies, '_INBOX.p.agent.r1.Xy.7')).toBe(false);
  });

  it('refuses the JetStream API, the system account, wildcards and spaces as reply subjects', () => {
    const register = 'p.registry.agents.a1.register';
    for (const reply of [
      '$JS.API.STREAM.PURGE.P_AGENT_INBOX',
      '$JS.API.STREAM.DELETE.P_AGENT_INBOX',
      '$JS.API.CONSUMER.DELETE.P_AGENT_INBOX.agent_b2',
      '$SYS.REQ.SERVER.PING',
      '_INBOX.p.agent.a1.>',
      '_INBOX.p.agent.a1.x *',
      '_INBOX.p.agent.a1.x y',
    ]) {
      expect(replyAllowed('p', BusPattern.RegisterAgent, register, reply), reply).toBe(false);
    }
  });

  it('takes no request on a family that is not request/reply, nor on an unknown one', () => {
    const events = CallEvents.subject('p', 'a1', 'm1');
    expect(askerInboxes('p', CallEvents.family, events)).toEqual([]);
    expect(replyAllowed('p', CallEvents.family, events, '_INBOX.p.agent.a1.x')).toBe(false);
    expect(askerInboxes('p', 'no.such.family', 'p.no.such.family')).toEqual([]);
  });

  it('refuses an agent-scoped subject whose agent token is not a valid agent id', () => {
    expect(askerInboxes('p', BusPattern.RegisterAgent, 'p.registry.agents.-x.register')).toEqual([]);
    expect(askerInboxes('p', BusPattern.RegisterAgent, 'p.registry.other.a1.register')).toEqual([]);
  });
});
