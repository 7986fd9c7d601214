import { describe, expect, it } from 'vitest';
import {
  INTROSPECTIONS_PER_SECOND,
  IntrospectionAdmission,
  sourceKey,
  UNKNOWN_PER_SECOND,
} from './introspection-admission';

/** An admission on a clock the test moves. */
function admission(perSourcePerMinute: number) {
  const clock = { now: 1_000_000 };
  return { clock, gate: new IntrospectionAdmission({ perSourcePerMinute, now: () => clock.now }) };
}

describe('IntrospectionAdmission: who may have a token introspected now', () => {
  it('refuses a source over its allowance with 429 before the issuer is asked, and refills it with time', () => {
    const { clock, gate } = admission(3);
    for (let i = 0; i < 3; i++) {
      const admitted = gate.admit(`made-up-${i}`, '203.0.113.7');
      expect(admitted.ok).toBe(true);
      if (admitted.ok) admitted.settle('inactive');
    }
    expect(gate.admit('made-up-3', '203.0.113.7')).toMatchObject({ ok: false, status: 429 });
    // Another address is not locked out.
    expect(gate.admit('made-up-4', '198.51.100.1').ok).toBe(true);
    clock.now += 20_000; // a third of a minute: one more
    expect(gate.admit('made-up-5', '203.0.113.7').ok).toBe(true);
    expect(gate.admit('made-up-6', '203.0.113.7')).toMatchObject({ ok: false, status: 429 });
  });

  it('charges a source nothing for a token found active, or for an issuer that could not answer', () => {
    const { gate } = admission(1);
    for (const outcome of ['active', 'unanswered'] as const) {
      const admitted = gate.admit(`token-${outcome}`, '203.0.113.7');
      expect(admitted.ok).toBe(true);
      if (admitted.ok) admitted.settle(outcome);
    }
    expect(gate.admit('one-more', '203.0.113.7').ok).toBe(true);
  });

  it('lets a token seen active before through when its source is over its allowance', () => {
    const { clock, gate } = admission(1);
    const first = gate.admit('valid', '203.0.113.7');
    if (first.ok) first.settle('active', clock.now + 3_600_000);
    const flood = gate.admit('made-up', '203.0.113.7');
    if (flood.ok) flood.settle('inactive');
    expect(gate.admit('made-up-2', '203.0.113.7')).toMatchObject({ ok: false, status: 429 });
    expect(gate.admit('valid', '203.0.113.7').ok).toBe(true);
  });

  it('keeps a share of the per-second budget for tokens seen active before, whatever floods from many sources', () => {
    const { clock, gate } = admission(100);
    const valid = gate.admit('valid', '198.51.100.1');
    if (valid.ok) valid.settle('active', clock.now + 3_600_000);
    clock.now += 1_000; // a new second
    let admitted = 0;
    for (let i = 0; i < 200; i++) if (gate.admit(`made-up-${i}`, `203.0.113.${i % 200}`).ok) admitted++;
    expect(admitted).toBe(UNKNOWN_PER_SECOND);
    expect(gate.admit('unknown-but-valid', '192.0.2.1')).toMatchObject({ ok: false, status: 503 });
    for (let i = UNKNOWN_PER_SECOND; i < INTROSPECTIONS_PER_SECOND; i++)
      expect(gate.admit('valid', '192.0.2.9').ok).toBe(true);
    expect(gate.admit('valid', '192.0.2.9')).toMatchObject({ ok: false, status: 503 });
  });

  it('forgets a token seen active once it expires, or once the issuer says it is not active', () => {
    const { clock, gate } = admission(1);
    const first = gate.admit('short-lived', '203.0.113.7');
    if (first.ok) first.settle('active', clock.now + 1_000);
    const flood = gate.admit('made-up', '203.0.113.7');
    if (flood.ok) flood.settle('inactive');
    clock.now += 1_001;
    expect(gate.admit('short-lived', '203.0.113.7')).toMatchObject({ ok: false, status: 429 });
  });

  it('counts an IPv6 /64 as one source, and an IPv4-mapped address as its IPv4 one', () => {
    expect(sourceKey('2001:db8:1:2:aaaa::1')).toBe(sourceKey('2001:db8:1:2::ffff:9'));
    expect(sourceKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(sourceKey('2001:db8:1:3::1')).not.toBe(sourceKey('2001:db8:1:2::1'));
    expect(sourceKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(sourceKey('::1')).toBe('0:0:0:0::/64');
    expect(sourceKey('203.0.113.7')).toBe('203.0.113.7');
  });
});
