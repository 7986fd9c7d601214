import { describe, expect, it } from 'vitest';
import { callFingerprint, canonicalJson } from './fingerprint';
import { takeIdempotencyKey } from './idempotency-key';

describe('canonicalJson', () => {
  it('sorts keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('drops undefined members like JSON does', () => {
    expect(canonicalJson({ a: undefined, b: 'x' })).toBe('{"b":"x"}');
  });
});

describe('callFingerprint', () => {
  it('is the same for the same call, whatever the key order', () => {
    expect(callFingerprint('t', { a: 1, b: 2 }).equals(callFingerprint('t', { b: 2, a: 1 }))).toBe(true);
  });

  it('differs for another tool or other arguments', () => {
    const base = callFingerprint('t', { a: 1 });
    expect(base.equals(callFingerprint('u', { a: 1 }))).toBe(false);
    expect(base.equals(callFingerprint('t', { a: 2 }))).toBe(false);
    expect(base.equals(callFingerprint('t', { a: '1' }))).toBe(false);
  });
});

describe('takeIdempotencyKey', () => {
  it('takes the key out of the arguments', () => {
    expect(takeIdempotencyKey({ idempotency_key: 'k-1', q: 'x' })).toEqual({
      ok: true,
      key: 'k-1',
      arguments: { q: 'x' },
    });
    expect(takeIdempotencyKey({ q: 'x' })).toEqual({ ok: true, arguments: { q: 'x' } });
  });

  it.each([[''], ['x'.repeat(256)], ['tab\there'], ['é'], [42], [null], [{}]])('refuses %j', (key) => {
    expect(takeIdempotencyKey({ idempotency_key: key }).ok).toBe(false);
  });

  it('accepts 255 printable characters', () => {
    expect(takeIdempotencyKey({ idempotency_key: '~'.repeat(255) }).ok).toBe(true);
  });
});
