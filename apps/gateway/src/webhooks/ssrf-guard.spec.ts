import { describe, expect, it } from 'vitest';
import { SsrfGuard, isRefusedAddress, parseAllowedHosts } from './ssrf-guard';

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

  it.each([
    // IPv4-compatible ::/96, in every form a registrant or a resolver can write it
    '::127.0.0.1',
    '::7f00:1',
    '0:0:0:0:0:0:7f00:1',
    '::8.8.8.8',
    // IPv4-mapped ::ffff:0:0/96, a public IPv4 address inside too
    '0:0:0:0:0:ffff:7f00:1',
    '::FFFF:7F00:1',
    '::ffff:8.8.8.8',
    '::ffff:0808:0808',
    // IPv4-translated ::ffff:0:0:0/96
    '::ffff:0:7f00:1',
    // NAT64: the well-known prefix with a public address, and the local-use /48
    '64:ff9b::8.8.8.8',
    '64:ff9b:1::10.0.0.1',
    '64:ff9b:1::808:808',
    '64:ff9b:1:ffff:ffff:ffff:ffff:ffff',
    // site-local (deprecated) fec0::/10
    'fec0::1',
    'feff:ffff::1',
    // a scoped address
    'fe80::1%eth0',
  ])('refuses the transition or deprecated range address %s', (address) =>
    expect(isRefusedAddress(address)).toBe(true),
  );

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '64:ff9b:2::1', '2001:4860:4860::8888'])(
    'lets %s through',
    (address) => expect(isRefusedAddress(address)).toBe(false),
  );
});

describe('SsrfGuard', () => {
  const refusal = async (guard: SsrfGuard, url: string) => {
    const result = await guard.resolve(new URL(url));
    return result.ok ? undefined : result.reason;
  };

  it('refuses a loopback URL unless WEBHOOK_ALLOWED_HOSTS names it', async () => {
    const url = new URL('http://127.0.0.1:9/hook');
    expect(await new SsrfGuard('').resolve(url)).toMatchObject({ ok: false });
    expect(await new SsrfGuard('127.0.0.1:9').resolve(url)).toEqual({ ok: true, address: '127.0.0.1', family: 4 });
  });

  it('checks what a name resolves to, not the name', async () => {
    expect(await new SsrfGuard('').resolve(new URL('http://localhost:9/'))).toMatchObject({ ok: false });
    expect(await new SsrfGuard('localhost:9').resolve(new URL('http://localhost:9/'))).toMatchObject({ ok: true });
  });

  it.each([
    // [the URL a registrant sends, the address the refusal names, the range]
    ['http://[::127.0.0.1]/hook', '::7f00:1', '::/96'],
    ['http://[::7f00:1]:8080/', '::7f00:1', '::/96'],
    ['http://[::8.8.8.8]/', '::808:808', '::/96'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1', '::ffff:0:0/96'],
    ['http://[::ffff:7f00:1]/', '::ffff:7f00:1', '::ffff:0:0/96'],
    ['http://[0:0:0:0:0:FFFF:7F00:0001]/', '::ffff:7f00:1', '::ffff:0:0/96'],
    ['http://[::ffff:8.8.8.8]/', '::ffff:808:808', '::ffff:0:0/96'],
    ['http://[::ffff:0:127.0.0.1]/', '::ffff:0:7f00:1', '::ffff:0:0:0/96'],
    ['http://[64:ff9b::8.8.8.8]/', '64:ff9b::808:808', '64:ff9b::/96'],
    ['http://[64:ff9b:1::10.0.0.1]/', '64:ff9b:1::a00:1', '64:ff9b:1::/48'],
    ['https://[64:ff9b:1:abcd::1]/', '64:ff9b:1:abcd::1', '64:ff9b:1::/48'],
    ['http://[fec0::1]/', 'fec0::1', 'fec0::/10'],
    ['http://[FEFF::1]/', 'feff::1', 'fec0::/10'],
  ])('registration refuses %s, naming %s (%s)', async (url, address, range) => {
    expect(SsrfGuard.checkUrl(url)).toMatchObject({ ok: true });
    const reason = await refusal(new SsrfGuard(''), url);
    expect(reason).toContain(`resolves to ${address},`);
    expect(reason).toContain(range);
    expect(reason).toMatch(/private, loopback or link-local/);
  });

  it('a bare entry admits ports 80 and 443 only, by scheme default or written out', async () => {
    const guard = new SsrfGuard('127.0.0.1,localhost');
    for (const url of [
      'http://127.0.0.1/',
      'http://127.0.0.1:80/',
      'https://127.0.0.1/',
      'https://127.0.0.1:443/',
      'http://127.0.0.1:443/',
      'https://localhost/',
    ]) {
      expect(await refusal(guard, url), url).toBeUndefined();
    }
    for (const url of ['http://127.0.0.1:8080/', 'https://127.0.0.1:8443/', 'http://localhost:8080/']) {
      expect(await refusal(guard, url), url).toMatch(/names it for port 80, 443 only, not 8\d\d\d/);
    }
  });

  it('an entry with a port admits exactly that port', async () => {
    const guard = new SsrfGuard('127.0.0.1:8080, localhost:9000');
    expect(await refusal(guard, 'http://127.0.0.1:8080/hook')).toBeUndefined();
    expect(await refusal(guard, 'http://localhost:9000/')).toBeUndefined();
    for (const url of ['http://127.0.0.1/', 'https://127.0.0.1/', 'http://127.0.0.1:8081/', 'http://localhost:9001/']) {
      expect(await refusal(guard, url), url).toMatch(/WEBHOOK_ALLOWED_HOSTS names it for port [\d, ]+ only/);
    }
    // another address on the same port is still refused
    expect(await refusal(guard, 'http://127.0.0.2:8080/')).toMatch(/does not name it/);
  });

  it('IPv6 entries: [v6]:port admits that port, [v6] and a bare v6 address 80 and 443, in any written form', async () => {
    const guard = new SsrfGuard('[::1]:8080,[FD00:0:0:0:0:0:0:1],fe80::1');
    expect(await refusal(guard, 'http://[::1]:8080/')).toBeUndefined();
    expect(await refusal(guard, 'http://[::1]/')).toMatch(/port 8080 only, not 80/);
    expect(await refusal(guard, 'http://[::1]:8081/')).toMatch(/port 8080 only, not 8081/);
    expect(await refusal(guard, 'https://[fd00::1]/')).toBeUndefined();
    expect(await refusal(guard, 'http://[fd00::1]:8080/')).toMatch(/port 80, 443 only, not 8080/);
    expect(await refusal(guard, 'http://[fe80::1]/')).toBeUndefined();
    // an allowed IPv4-mapped address, written either way
    const mapped = new SsrfGuard('[::ffff:127.0.0.1]:8080');
    expect(await refusal(mapped, 'http://[::ffff:7f00:1]:8080/')).toBeUndefined();
    expect(await refusal(mapped, 'http://[::ffff:7f00:1]/')).toMatch(/port 8080 only/);
    // naming the IPv4 address does not admit it inside IPv6
    expect(await refusal(new SsrfGuard('127.0.0.1:8080'), 'http://[::ffff:127.0.0.1]:8080/')).toMatch(
      /does not name it/,
    );
  });

  it('refuses a malformed WEBHOOK_ALLOWED_HOSTS entry', () => {
    for (const list of ['127.0.0.1:0', 'host:70000', 'host:http', '[::1', '[example.com]', 'a/b', '::1:8080:x']) {
      expect(() => new SsrfGuard(list), list).toThrow(/WEBHOOK_ALLOWED_HOSTS/);
    }
    expect(parseAllowedHosts(' Example.COM , 127.1:8080, [::1]:9, ::1 ')).toEqual([
      { host: 'example.com' },
      { host: '127.0.0.1', port: 8080 },
      { host: '::1', port: 9 },
      { host: '::1' },
    ]);
  });

  it('refuses URLs that are not http(s) or carry credentials', () => {
    expect(SsrfGuard.checkUrl('ftp://example.com/')).toMatchObject({ ok: false });
    expect(SsrfGuard.checkUrl('https://u:p@example.com/')).toMatchObject({ ok: false });
    expect(SsrfGuard.checkUrl('nonsense')).toMatchObject({ ok: false });
    expect(SsrfGuard.checkUrl('https://example.com/hook')).toMatchObject({ ok: true });
  });
});
