import { describe, expect, it } from 'vitest';
import { SsrfGuard, isRefusedAddress } from './ssrf-guard';

describe('isRefusedAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::10.0.0.1',
    'not-an-ip',
  ])('refuses %s', (address) => expect(isRefusedAddress(address)).toBe(true));

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])(
    'lets %s through',
    (address) => expect(isRefusedAddress(address)).toBe(false),
  );
});

describe('SsrfGuard', () => {
  it('refuses a loopback URL unless WEBHOOK_ALLOWED_HOSTS names it', async () => {
    const url = new URL('http://127.0.0.1:9/hook');
    expect(await new SsrfGuard('').resolve(url)).toMatchObject({ ok: false });
    expect(await new SsrfGuard('127.0.0.1').resolve(url)).toEqual({ ok: true, address: '127.0.0.1', family: 4 });
  });

  it('checks what a name resolves to, not the name', async () => {
    expect(await new SsrfGuard('').resolve(new URL('http://localhost:9/'))).toMatchObject({ ok: false });
    expect(await new SsrfGuard('localhost').resolve(new URL('http://localhost:9/'))).toMatchObject({ ok: true });
  });

  it('refuses URLs that are not http(s) or carry credentials', () => {
    expect(SsrfGuard.checkUrl('ftp://example.com/')).toMatchObject({ ok: false });
    expect(SsrfGuard.checkUrl('https://u:p@example.com/')).toMatchObject({ ok: false });
    expect(SsrfGuard.checkUrl('nonsense')).toMatchObject({ ok: false });
    expect(SsrfGuard.checkUrl('https://example.com/hook')).toMatchObject({ ok: true });
  });
});
