import * as contracts from '@mcpgw/contracts';
import { BUS_ACCESS, BusPattern } from '@mcpgw/contracts';
import { describe, expect, it } from 'vitest';
import { inboxPrefix, permissionsFor } from './permissions';

describe('NATS permissions from the bus contract', () => {
  it('covers every subject family and operation declared in contracts (a new subject cannot be forgotten)', () => {
    const declared = new Set<string>(Object.values(BusPattern));
    for (const value of Object.values(contracts)) {
      const family = (value as { family?: unknown } | null)?.family;
      if (typeof value === 'object' && typeof family === 'string') declared.add(family);
    }
    const covered = new Set(BUS_ACCESS.map((access) => access.family));
    expect([...declared].filter((family) => !covered.has(family))).toEqual([]);
    expect(declared.size).toBeGreaterThan(10);
  });

  it('gives an agent only subjects that name it, its own consumer and its own reply inbox', () => {
    const perms = permissionsFor('p', { role: 'agent', agentId: 'a1' });
    for (const subject of [...perms.pub, ...perms.sub]) {
      if (subject === '$JS.API.INFO') continue;
      expect(subject, subject).toMatch(/(^|\.|_)a1(\.|$)/);
    }
    expect(perms.pub).toContain('p.ms.replicas.*.replies.a1');
    expect(perms.pub).toContain('p.registry.agents.a1.register');
    expect(perms.pub).not.toContain('p.ms.messages.post');
    expect(perms.sub).toContain(`${inboxPrefix('p', { role: 'agent', agentId: 'a1' })}.>`);
    expect(perms).not.toHaveProperty('resp');
  });

  it("lets the services answer only in the askers' reply inboxes (no allow_responses)", () => {
    const gateway = permissionsFor('p', { role: 'gateway' });
    const ms = permissionsFor('p', { role: 'message-service' });
    expect(gateway).not.toHaveProperty('resp');
    expect(ms).not.toHaveProperty('resp');
    // The gateway answers registrations (agents); the message service the gateway and agents.
    expect(gateway.pub.filter((s) => s.startsWith('_INBOX.'))).toEqual(['_INBOX.p.agent.*.>']);
    expect(ms.pub.filter((s) => s.startsWith('_INBOX.')).sort()).toEqual(['_INBOX.p.agent.*.>', '_INBOX.p.gateway.>']);
    expect(permissionsFor('p', { role: 'agent', agentId: 'a1' }).pub.some((s) => s.startsWith('_INBOX.'))).toBe(false);
  });

  it('gives the message service no JetStream call that purges, deletes or changes consumers', () => {
    const ms = permissionsFor('p', { role: 'message-service' });
    const api = ms.pub.filter((s) => s.startsWith('$JS.API.'));
    expect(api).not.toContain('$JS.API.>');
    for (const subject of api)
      expect(subject, subject).not.toMatch(/PURGE|DELETE|CONSUMER\.CREATE|DURABLE|>|^\$JS\.API\.\*/);
    expect(ms.pub.some((s) => s.startsWith('$SYS'))).toBe(false);
  });

  it('lets only the gateway post and wait, and only the message service manage JetStream', () => {
    const gateway = permissionsFor('p', { role: 'gateway' });
    const ms = permissionsFor('p', { role: 'message-service' });
    expect(gateway.pub).toEqual(expect.arrayContaining(['p.ms.messages.post', 'p.ms.messages.post_and_wait']));
    expect(gateway.pub.some((s) => s.startsWith('$JS.'))).toBe(false);
    expect(ms.pub).toContain('$JS.API.STREAM.CREATE.P_AGENT_INBOX');
    expect(ms.pub).not.toContain('p.ms.messages.post');
    expect(ms.sub).not.toContain(`${inboxPrefix('p', { role: 'gateway' })}.>`);
  });
});
