import { describe, expect, it } from 'vitest';
import { AuditChain } from './audit-chain';
import { auditedArguments, redactedKeys, REDACTED } from './audit-arguments';
import { GENESIS_HASH, auditEntry, chainHash, storable, type AuditEntry } from './audit-record';
import { RefusalCounter } from './auth-failures';

describe('the audit chain', () => {
  it('links each row to the one before: seq in order, hash = SHA-256(previous hash, canonical row)', () => {
    const chain = new AuditChain('gateway-1');
    const now = new Date('2026-12-03T10:00:00Z');
    const { rows } = chain.link(
      [auditEntry('tool_call', { tool: 'echo' }), auditEntry('tool_call', { tool: 'sleep' })],
      now,
    );
    expect(rows.map((r) => r.seq)).toEqual([1, 2]);
    expect(rows[0].chain).toMatch(/^2026-12-03\/gateway-1-[0-9a-f]{8}$/);
    expect(rows[0].prev_hash).toBe(GENESIS_HASH);
    expect(rows[1].prev_hash).toBe(rows[0].hash);
    expect(rows[1].hash).toBe(chainHash(rows[0].hash, rows[1]));
    // Any field changed changes the hash; key order does not.
    expect(chainHash(rows[0].hash, { ...rows[1], tool: 'echo' })).not.toBe(rows[1].hash);
  });

  it('hashes a row as every verifier of the trail does: two rows pinned', () => {
    // Written by the first implementation (canonical JSON sorted at run time); a trail written
    // before a change must still verify after it, so these hashes never change.
    const call = {
      chain: '2026-12-03/gateway-1-0a0b0c0d',
      seq: 7,
      kind: 'tool_call',
      at: '2026-12-03T10:00:00.123Z',
      surface: 'mcp-a',
      principal: 'apikey:k1',
      agent_id: 'demo-agent',
      tool: 'echo',
      call_id: 'c-1',
      outcome: 'ok',
      error_code: null,
      duration_ms: 12,
      pod_id: undefined,
      replayed: false,
      arguments_digest: 'ab'.repeat(32),
      arguments: { b: [1, { d: 'x', c: null }], a: '\u00e9\u2028"' },
      detail: { why: 'x', count: 2, nested: { z: 1, y: [true] } },
    } as unknown as AuditEntry & { chain: string; seq: number };
    expect(chainHash(GENESIS_HASH, call)).toBe('f25817c2c71e2ccd4d912a20811dc0b9af6a2bf36c6c6d27e5a2bb136487ea0c');
    const admin = {
      ...call,
      kind: 'admin_action' as const,
      surface: 'admin-api',
      tool: null,
      call_id: null,
      arguments: undefined,
      arguments_digest: null,
      replayed: null,
      pod_id: 'pod-1',
      detail: null,
    };
    expect(chainHash('f'.repeat(64), admin)).toBe('da5feae74e531eb6bd34f46ab61e0e8c7fba707e5ef6eaafbf3225516d1923ac');
  });

  it('starts a new chain on a new day, and says which one ended', () => {
    const chain = new AuditChain('gateway-1');
    chain.link([auditEntry('tool_call', {})], new Date('2026-12-03T23:59:59Z'));
    const { rows, ended } = chain.link([auditEntry('tool_call', {})], new Date('2026-12-04T00:00:01Z'));
    expect(rows[0]).toMatchObject({ seq: 1, prev_hash: GENESIS_HASH });
    expect(rows[0].chain.startsWith('2026-12-04/')).toBe(true);
    expect(ended).toEqual([expect.objectContaining({ seq: 1, chain: expect.stringMatching(/^2026-12-03\//) })]);
  });
});

describe('arguments on the trail', () => {
  const args = { to: 'a@example.com', api_key: 'k', nested: { Password: 'p', keep: 1 } };
  const redact = redactedKeys('pass,secret,token,key');

  it('keeps only the digest by default, the same for any key order', () => {
    const digest = auditedArguments(args, 'digest', redact);
    expect(digest.arguments).toBeNull();
    expect(digest.arguments_digest).toMatch(/^[0-9a-f]{64}$/);
    const reordered = { nested: { keep: 1, Password: 'p' }, api_key: 'k', to: 'a@example.com' };
    expect(auditedArguments(reordered, 'digest', redact).arguments_digest).toBe(digest.arguments_digest);
  });

  it('redacts the values of matching keys at any depth, or keeps them all with full', () => {
    expect(auditedArguments(args, 'redacted', redact).arguments).toEqual({
      to: 'a@example.com',
      api_key: REDACTED,
      nested: { Password: REDACTED, keep: 1 },
    });
    expect(auditedArguments(args, 'full', redact).arguments).toEqual(args);
  });
});

describe('refused credentials', () => {
  it('are counted per minute and source, and given out once their minute is over', () => {
    const counter = new RefusalCounter();
    const at = new Date('2026-12-03T10:00:10Z');
    for (let i = 0; i < 500; i++) counter.add({ source: '10.0.0.9', surface: 'mcp-a', status: 401 }, at);
    counter.add({ source: '10.0.0.8', surface: 'rest', status: 401 }, at);
    expect(counter.take(new Date('2026-12-03T10:00:50Z'))).toEqual([]);
    const taken = counter.take(new Date('2026-12-03T10:01:00Z'));
    expect(taken).toEqual([
      expect.objectContaining({ source: '10.0.0.9', count: 500, window: '2026-12-03T10:00:00.000Z' }),
      expect.objectContaining({ source: '10.0.0.8', count: 1 }),
    ]);
    expect(counter.take(new Date('2026-12-03T10:02:00Z'))).toEqual([]);
  });
});

describe('what PostgreSQL can hold', () => {
  it('has U+0000 and lone surrogates replaced, in strings and keys at any depth (one bad row would stop the chain)', () => {
    const entry = auditEntry('admin_action', {
      principal: 'a\u0000b',
      detail: { target: { 'k\uD800': ['x\uDC00y', 'ok \uD83D\uDE00'] } },
    });
    expect(entry.principal).toBe('a\uFFFDb');
    expect(entry.detail).toEqual({ target: { 'k\uFFFD': ['x\uFFFDy', 'ok \uD83D\uDE00'] } });
    expect(storable({ n: 1, b: true, z: null })).toEqual({ n: 1, b: true, z: null });
  });
});
