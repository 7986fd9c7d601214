import { describe, expect, it } from 'vitest';
import { subjectOfAnyShape, subjectOfShape } from './subject-guard';

const ACK = '$JS.ACK.P_AGENT_INBOX.agent_a1.*.*.*.*.*';

describe('subjectOfShape', () => {
  it('takes a concrete subject of the shape', () => {
    expect(subjectOfShape('$JS.ACK.P_AGENT_INBOX.agent_a1.1.7.3.1764620000000000000.0', ACK)).toBe(true);
    expect(subjectOfShape('_INBOX.p.agent.a1.AbC123.4', '_INBOX.p.agent.a1.>')).toBe(true);
    expect(subjectOfShape('p.ms.replicas.r1.replies.a1', 'p.ms.replicas.*.replies.a1')).toBe(true);
  });

  it('refuses whitespace and control characters anywhere (they would add PUB arguments)', () => {
    for (const bad of [
      '$JS.ACK.P_AGENT_INBOX.agent_a1.1 a b.7.3.4.0',
      '$JS.ACK.P_AGENT_INBOX.agent_a1.1.7.3.4.0 x',
      '$JS.ACK.P_AGENT_INBOX.agent_a1.1.7.3.4.0\r\nPUB x 0',
      '$JS.ACK.P_AGENT_INBOX.agent_a1.1.7.3.4.0\t',
    ]) {
      expect(subjectOfShape(bad, ACK), JSON.stringify(bad)).toBe(false);
    }
  });

  it('refuses wildcards, empty tokens, extra or missing tokens, and other literals', () => {
    for (const bad of [
      '$JS.ACK.P_AGENT_INBOX.agent_a1.1.7.3.4.*',
      '$JS.ACK.P_AGENT_INBOX.agent_a1.1.7.3.4.>',
      '$JS.ACK.P_AGENT_INBOX.agent_a1.1..3.4.0',
      '$JS.ACK.P_AGENT_INBOX.agent_a1.1.7.3.4.0.$JS.API.STREAM.PURGE.P_AGENT_INBOX',
      '$JS.ACK.P_AGENT_INBOX.agent_a1.1.7.3.4',
      '$JS.ACK.P_AGENT_INBOX.agent_b2.1.7.3.4.0',
      '$JS.API.STREAM.PURGE.P_AGENT_INBOX',
      '',
    ]) {
      expect(subjectOfShape(bad, ACK), bad).toBe(false);
    }
    expect(subjectOfShape('_INBOX.p.agent.a1', '_INBOX.p.agent.a1.>')).toBe(false); // `>` is one or more
    expect(subjectOfShape('_INBOX.p.agent.a1x.y', '_INBOX.p.agent.a1.>')).toBe(false);
  });

  it('refuses what is not a string, and overlong subjects', () => {
    expect(subjectOfShape(undefined, ACK)).toBe(false);
    expect(subjectOfShape(42, ACK)).toBe(false);
    expect(subjectOfShape(`_INBOX.p.${'x'.repeat(600)}`, '_INBOX.p.>')).toBe(false);
  });

  it('any of several shapes', () => {
    expect(subjectOfAnyShape('_INBOX.p.gateway.x', ['_INBOX.p.agent.a.>', '_INBOX.p.gateway.>'])).toBe(true);
    expect(subjectOfAnyShape('_INBOX.p.gateway.x', [])).toBe(false);
  });
});
