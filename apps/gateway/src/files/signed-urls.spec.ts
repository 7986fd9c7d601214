import { describe, expect, it } from 'vitest';
import { parseSigningKeys, UrlSigner } from './signed-urls';

const secretA = 'a'.repeat(40);
const secretB = 'b'.repeat(40);
const query = (text: string) => Object.fromEntries(new URLSearchParams(text));
const inAMinute = () => new Date(Date.now() + 60_000);

describe('UrlSigner', () => {
  const signer = new UrlSigner(parseSigningKeys(`k1:${secretA}`));

  it('accepts its own URL for its file, method and time', () => {
    expect(signer.check(query(signer.sign('f1', 'GET', inAMinute())), 'f1', 'GET')).toEqual({ ok: true });
    expect(signer.check(query(signer.sign('f1', 'GET', inAMinute())), 'f1', 'HEAD')).toEqual({ ok: true });
  });

  it('says which: tampered, foreign file, wrong method, expired, unknown key, malformed', () => {
    const signed = query(signer.sign('f1', 'GET', inAMinute()));
    const reason = (q: Record<string, unknown>, file = 'f1', method = 'GET') => {
      const checked = signer.check(q, file, method);
      return checked.ok ? 'ok' : checked.reason;
    };
    expect(reason({ ...signed, expires: String(Number(signed.expires) + 3600) })).toBe('tampered');
    expect(reason({ ...signed, file: 'f2' }, 'f2')).toBe('tampered');
    expect(reason({ ...signed, sig: signed.sig.slice(0, -1) + (signed.sig.endsWith('A') ? 'B' : 'A') })).toBe(
      'tampered',
    );
    expect(reason(signed, 'f2')).toBe('foreign_file');
    expect(reason(signed, 'f1', 'PUT')).toBe('wrong_method');
    expect(reason(query(signer.sign('f1', 'GET', new Date(Date.now() - 1000))))).toBe('expired');
    expect(reason({ ...signed, kid: 'k9' })).toBe('unknown_key');
    expect(reason({ ...signed, sig: undefined })).toBe('malformed');
    expect(reason({})).toBe('malformed');
  });

  it('rotates: a URL signed by the old key still verifies while the old key is listed', () => {
    const old = new UrlSigner(parseSigningKeys(`k1:${secretA}`));
    const rotated = new UrlSigner(parseSigningKeys(`k2:${secretB},k1:${secretA}`));
    const signedByOld = query(old.sign('f1', 'GET', inAMinute()));
    expect(rotated.check(signedByOld, 'f1', 'GET')).toEqual({ ok: true });
    expect(query(rotated.sign('f1', 'GET', inAMinute())).kid).toBe('k2');
    const dropped = new UrlSigner(parseSigningKeys(`k2:${secretB}`));
    expect(dropped.check(signedByOld, 'f1', 'GET')).toMatchObject({ ok: false, reason: 'unknown_key' });
  });

  it('refuses short secrets without echoing them', () => {
    expect(() => parseSigningKeys('k1:short')).toThrow(/32 characters/);
    try {
      parseSigningKeys('k1:short');
    } catch (error) {
      expect((error as Error).message).not.toContain('short');
    }
  });
});
