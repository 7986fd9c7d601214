import { describe, expect, it } from 'vitest';
import { redactSecrets } from './secret-formats';

const id = 'AbC-123_xyz9';
const secret = 'S3cr3t-_abcdefghijklmnopqrstuvwxyz012345678';
const apiKey = `bak_${id}_${secret}`;
const pat = `pat_${id}_${secret}`;
const jwt =
  'eyJhbGciOiJFZERTQSIsImtpZCI6ImsxIiwidHlwIjoicmcrand0In0.eyJ3cyI6ImRlbW8iLCJhZ3QiOiJhIn0.c2lnbmF0dXJlLXBhcnQtb2YtdGhlLWp3dA';

describe('redactSecrets', () => {
  it('keeps the prefix and public id of an API key, never its secret', () => {
    expect(redactSecrets(`key ${apiKey} refused`)).toBe(`key bak_${id}_… refused`);
  });

  it('does the same to a personal access token', () => {
    expect(redactSecrets(`Bearer ${pat}`)).toBe(`Bearer pat_${id}_…`);
  });

  it('does the same to an admin token of the management API', () => {
    expect(redactSecrets(`authorization: Bearer adm_${id}_${secret}`)).toBe(`authorization: Bearer adm_${id}_…`);
    expect(redactSecrets('Bearer adm_notwellformedatall')).toBe('Bearer adm_…');
    expect(redactSecrets(`cookie: __Host-mcpgw_admin=ads_${id}_${secret}`)).toBe(
      `cookie: __Host-mcpgw_admin=ads_${id}_…`,
    );
    // The console's one-time login code, in a link or a login body.
    expect(redactSecrets(`/console/#login=adl_${id}_${secret}`)).toBe(`/console/#login=adl_${id}_…`);
    expect(redactSecrets(`{"login_code":"adl_${id}_${secret}"}`)).toBe(`{"login_code":"adl_${id}_…"}`);
  });

  it('cuts a malformed key down to its prefix', () => {
    expect(redactSecrets('x-agent-api-key: bak_notwellformedatall')).toBe('x-agent-api-key: bak_…');
  });

  it('replaces a RuntimeGrant (a JWT) whole, signed or not', () => {
    expect(redactSecrets(`authorization: Bearer ${jwt}`)).toBe('authorization: Bearer [jwt]');
    expect(redactSecrets(jwt.slice(0, jwt.lastIndexOf('.') + 1))).toBe('[jwt]');
  });

  it('finds secrets inside JSON, after an escape, and several in one text', () => {
    const line = JSON.stringify({ msg: `first\n${apiKey}`, headers: { a: jwt, b: pat } });
    const out = redactSecrets(line);
    for (const leaked of [secret, jwt, apiKey, pat]) expect(out).not.toContain(leaked);
    expect(JSON.parse(out)).toEqual({ msg: `first\nbak_${id}_…`, headers: { a: '[jwt]', b: `pat_${id}_…` } });
  });

  it('leaves other text alone, and redacted text as it is', () => {
    const plain = 'tools/call echo by key AbC-123_xyz9 (kebab_case_words, eyJ alone)';
    expect(redactSecrets(plain)).toBe(plain);
    const once = redactSecrets(`${apiKey} ${pat} ${jwt}`);
    expect(redactSecrets(once)).toBe(once);
  });
});
