import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';

/**
 * Address ranges a webhook may not reach unless WEBHOOK_ALLOWED_HOSTS names them,
 * each with what it is (named in the refusal). The first that holds an address names it.
 */
const RANGES: readonly (readonly [net: string, prefix: number, family: 'ipv4' | 'ipv6', what: string])[] = [
  ['0.0.0.0', 8, 'ipv4', '"this network", 0.0.0.0/8'],
  ['10.0.0.0', 8, 'ipv4', 'private, 10.0.0.0/8'],
  ['100.64.0.0', 10, 'ipv4', 'carrier-grade NAT, 100.64.0.0/10'],
  ['127.0.0.0', 8, 'ipv4', 'loopback, 127.0.0.0/8'],
  ['169.254.0.0', 16, 'ipv4', 'link-local and cloud metadata, 169.254.0.0/16'],
  ['172.16.0.0', 12, 'ipv4', 'private, 172.16.0.0/12'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol assignments, 192.0.0.0/24'],
  ['192.168.0.0', 16, 'ipv4', 'private, 192.168.0.0/16'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking, 198.18.0.0/15'],
  ['224.0.0.0', 4, 'ipv4', 'multicast, 224.0.0.0/4'],
  ['240.0.0.0', 4, 'ipv4', 'reserved and broadcast, 240.0.0.0/4'],
  ['::', 128, 'ipv6', 'unspecified, ::'],
  ['::1', 128, 'ipv6', 'loopback, ::1'],
  // IPv4 inside IPv6: refused whole, whatever IPv4 address they carry (public too).
  // What such an address reaches is decided by a translator or a dual-stack socket,
  // not by the address itself; refusing the range needs no decoding of any form.
  ['::', 96, 'ipv6', 'IPv4-compatible IPv6, ::/96'],
  ['::ffff:0:0', 96, 'ipv6', 'IPv4-mapped IPv6, ::ffff:0:0/96'],
  ['::ffff:0:0:0', 96, 'ipv6', 'IPv4-translated IPv6, ::ffff:0:0:0/96'],
  ['64:ff9b::', 96, 'ipv6', 'NAT64, 64:ff9b::/96'],
  ['64:ff9b:1::', 48, 'ipv6', 'local-use NAT64, 64:ff9b:1::/48'],
  ['100::', 64, 'ipv6', 'discard, 100::/64'],
  ['fc00::', 7, 'ipv6', 'unique local, fc00::/7'],
  ['fe80::', 10, 'ipv6', 'link-local, fe80::/10'],
  ['fec0::', 10, 'ipv6', 'site-local (deprecated), fec0::/10'],
  ['ff00::', 8, 'ipv6', 'multicast, ff00::/8'],
];

const CHECKS = RANGES.map(([net, prefix, family, what]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return { family, what, list };
});

/**
 * Why `address` is refused (the range it is in), or undefined for a public one.
 * Anything that is not a plain IP address (a zone `%eth0`, a name) is refused.
 */
export function refusedRange(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0 || address.includes('%')) return 'not a plain IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  // An IPv6 address is checked against IPv6 ranges only: BlockList would also
  // match an IPv4-mapped one against IPv4 ranges, and the IPv6 range names it better.
  return CHECKS.find((check) => check.family === type && check.list.check(address, type))?.what;
}

/** True for private, loopback, link-local, IPv4-in-IPv6 and other non-public addresses. */
export function isRefusedAddress(address: string): boolean {
  return refusedRange(address) !== undefined;
}

/** One WEBHOOK_ALLOWED_HOSTS entry: a host name or address, and the one port it admits (none: 80 and 443). */
export interface AllowedHost {
  host: string;
  port?: number;
}

/**
 * WEBHOOK_ALLOWED_HOSTS, comma-separated: `host`, `host:port`, `address`,
 * `address:port`, `[v6]`, `[v6]:port` (a bare IPv6 address without brackets
 * takes no port). Hosts are normalized as a URL's host is (lower case, IPv6
 * compressed, IPv4 dotted). Throws on an entry that is none of these.
 */
export function parseAllowedHosts(list: string): AllowedHost[] {
  return list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const form =
        /^\[([^\]]+)\](?::(\d+))?$/.exec(entry) ?? // [v6] or [v6]:port
        (isIP(entry) === 6 ? [entry, entry] : undefined) ?? // a bare v6 address
        /^([^:[\]/?#@\s]+)(?::(\d+))?$/.exec(entry); // host, host:port
      const bracketed = entry.startsWith('[') || isIP(entry) === 6;
      if (!form || (bracketed && isIP(form[1]) !== 6)) {
        throw new Error(`WEBHOOK_ALLOWED_HOSTS: "${entry}" is not host, host:port, [v6] or [v6]:port`);
      }
      const host = canonicalHost(bracketed ? `[${form[1]}]` : form[1]);
      if (host === undefined) throw new Error(`WEBHOOK_ALLOWED_HOSTS: "${entry}" does not name a valid host`);
      if (form[2] === undefined) return { host };
      const port = Number(form[2]);
      if (!Number.isInteger(port) || port < 1 || port > 65535) {
        throw new Error(`WEBHOOK_ALLOWED_HOSTS: "${entry}" names a port outside 1-65535`);
      }
      return { host, port };
    });
}

/** The ports a bare WEBHOOK_ALLOWED_HOSTS entry admits. */
const DEFAULT_PORTS = [80, 443];

export type Resolved = { ok: true; address: string; family: 4 | 6 } | { ok: false; reason: string };

/**
 * Where a webhook URL may be sent: its host resolved, every address checked.
 * The delivery connects to the address returned here, never resolving again,
 * so a DNS answer that changes between the check and the connection cannot
 * point it elsewhere.
 */
export class SsrfGuard {
  private readonly allowed: AllowedHost[];

  constructor(allowedHosts: string) {
    this.allowed = parseAllowedHosts(allowedHosts);
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

  /** A URL to register (a webhook, an A2A push config): its form, then its addresses; the URL as stored. */
  async admit(raw: string): Promise<{ ok: true; url: string } | { ok: false; reason: string }> {
    const form = SsrfGuard.checkUrl(raw);
    if (!form.ok) return form;
    const resolved = await this.resolve(form.url);
    return resolved.ok ? { ok: true, url: form.url.toString() } : resolved;
  }

  async resolve(url: URL): Promise<Resolved> {
    const host = normalizeHost(url.hostname);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    let addresses: { address: string; family: number }[];
    try {
      addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true });
    } catch (error) {
      return { ok: false, reason: `cannot resolve ${host} (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
    }
    if (addresses.length === 0) return { ok: false, reason: `cannot resolve ${host}` };
    // An allowed host may resolve anywhere: its addresses need no range check (a delivery's common case on a LAN).
    const hostAllowed = this.admits(host, port);
    for (const { address } of hostAllowed ? [] : addresses) {
      const range = refusedRange(address);
      if (range === undefined) continue;
      const named = canonicalHost(isIP(address) === 6 ? `[${address}]` : address) ?? address;
      if (this.admits(named, port)) continue;
      return {
        ok: false,
        reason: `${host} resolves to ${address}, a private, loopback or link-local address (${range}); ${this.why(host, named, port)}`,
      };
    }
    const [first] = addresses;
    return { ok: true, address: first.address, family: first.family === 6 ? 6 : 4 };
  }

  /** Whether an entry names `host` (a name or a canonical address) for `port`. */
  private admits(host: string, port: number): boolean {
    return this.allowed.some(
      (entry) => entry.host === host && (entry.port === undefined ? DEFAULT_PORTS.includes(port) : entry.port === port),
    );
  }

  /** Why no entry admits it: none names it, or those that do name other ports. */
  private why(host: string, address: string, port: number): string {
    const ports = this.allowed
      .filter((entry) => entry.host === host || entry.host === address)
      .flatMap((entry) => (entry.port === undefined ? DEFAULT_PORTS : [entry.port]));
    if (ports.length === 0) return 'WEBHOOK_ALLOWED_HOSTS does not name it';
    return `WEBHOOK_ALLOWED_HOSTS names it for port ${[...new Set(ports)].join(', ')} only, not ${port}`;
  }
}

/** Lower case, without IPv6 brackets. */
function normalizeHost(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
}

/** A host as a URL's hostname has it (IPv6 in brackets: `[::1]`), without brackets; undefined if no URL takes it. */
function canonicalHost(host: string): string | undefined {
  try {
    return normalizeHost(new URL(`http://${host}/`).hostname) || undefined;
  } catch {
    return undefined;
  }
}
