import { describe, expect, it } from 'vitest';
import { apiKeyId, apiKeyMatches, digestApiKey, mintApiKey } from './api-keys';

describe('agent API keys', () => {
  it('mints a key whose id can be read back and whose digest verifies it', () => {
    const minted = mintApiKey();
    expect(minted.key.startsWith(`bak_${minted.id}_`)).toBe(true);
    expect(apiKeyId(minted.key)).toBe(minted.id);
    expect(apiKeyMatches(minted.key, minted.digest)).toBe(true);
  });

  it('never stores the key itself: the digest is 32 bytes that do not contain it', () => {
    const minted = mintApiKey();
    expect(minted.digest).toHaveLength(32);
    expect(minted.digest.toString('utf8')).not.toContain(minted.key);
  });

  it('mints ids that never begin with "-", so the admin CLI cannot take one for an option', () => {
    // One plain base64url id in 64 begins with "-": 2,000 mints would all but surely show one.
    const ids = Array.from({ length: 2_000 }, () => mintApiKey().id);
    expect(ids.filter((id) => id.startsWith('-'))).toEqual([]);
    expect(ids.every((id) => /^[A-Za-z0-9_][A-Za-z0-9_-]{11}$/.test(id))).toBe(true);
  });

  it('mints distinct keys', () => {
    const keys = new Set(Array.from({ length: 100 }, () => mintApiKey().key));
    expect(keys.size).toBe(100);
  });

  it('refuses a key that differs in one character', () => {
    const minted = mintApiKey();
    const last = minted.key.at(-1) === 'A' ? 'B' : 'A';
    expect(apiKeyMatches(minted.key.slice(0, -1) + last, minted.digest)).toBe(false);
  });

  it.each([
    '',
    'bak_',
    'bak_short_secret',
    'pat_abcdefghijkl_' + 'x'.repeat(43),
    `bak_${'a'.repeat(12)}_${'b'.repeat(42)}`,
  ])('reads no id from the malformed key %j', (key) => {
    expect(apiKeyId(key)).toBeUndefined();
  });

  it('compares digests of different lengths without throwing', () => {
    expect(apiKeyMatches('bak_x', digestApiKey('bak_x').subarray(0, 16))).toBe(false);
  });
});
