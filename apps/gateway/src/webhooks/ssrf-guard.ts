import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';

/** Address ranges a webhook may not reach unless WEBHOOK_ALLOWED_HOSTS names them. */
const REFUSED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  REFUSED.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['100::', 64], // discard
] as const) {
  REFUSED.addSubnet(net, prefix, 'ipv6');
}

/** An IPv4 address an IPv6 one carries (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`), if any. */
function embeddedIpv4(address: string): string | undefined {
  const match = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!match) return undefined;
  if (match[1]) return match[1];
  const high = parseInt(match[2], 16);
  const low = parseInt(match[3], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** True for private, loopback, link-local and other non-public addresses. */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return REFUSED.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIpv4(address);
  return v4 ? REFUSED.check(v4, 'ipv4') : REFUSED.check(address, 'ipv6');
}

export type Resolved = { ok: true; address: string; family: 4 | 6 } | { ok: false; reason: string };

/**
 * Where a webhook URL may be sent: its host resolved, every address checked.
 * The delivery connects to the address returned here, never resolving again,
 * so a DNS answer that changes between the check and the connection cannot
 * point it elsewhere.
 */
export class SsrfGuard {
  private readonly allowed: Set<string>;

  constructor(allowedHosts: string) {
    this.allowed = new Set(
      allowedHosts
        .split(',')
        .map((host) => normalizeHost(host.trim()))
        .filter(Boolean),
    );
  }

  /** A URL's form: http(s), no credentials in it. */
  static checkUrl(raw: string): { ok: true; url: URL } | { ok: false; reason: string } {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return { ok: false, reason: 'not a valid URL' };
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'must be http or https' };
    if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
    if (raw.length > 2048) return { ok: false, reason: 'longer than 2048 characters' };
    return { ok: true, url };
  }

  async resolve(url: URL): Promise<Resolved> {
    const host = normalizeHost(url.hostname);
    let addresses: { address: string; family: number }[];
    try {
      addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true });
    } catch (error) {
      return { ok: false, reason: `cannot resolve ${host} (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
    }
    if (addresses.length === 0) return { ok: false, reason: `cannot resolve ${host}` };
    const hostAllowed = this.allowed.has(host);
    for (const { address } of addresses) {
      if (!hostAllowed && !this.allowed.has(normalizeHost(address)) && isRefusedAddress(address)) {
        return {
          ok: false,
          reason: `${host} resolves to ${address}, a private, loopback or link-local address (WEBHOOK_ALLOWED_HOSTS does not name it)`,
        };
      }
    }
    const [first] = addresses;
    return { ok: true, address: first.address, family: first.family === 6 ? 6 : 4 };
  }
}

/** Lower case, without IPv6 brackets. */
function normalizeHost(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
}
