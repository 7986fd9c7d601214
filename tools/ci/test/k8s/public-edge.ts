import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { durationMs, type Match, type Rule } from './gateway-api';

/**
 * What publishes the gateway's public port (an Ingress, a Gateway API HTTPRoute) against
 * what the gateway serves there: every route the gateway registers reaches the Service's
 * `http` port, through settings that let it work (SSE unbuffered, timeouts above the
 * longest call, the body sizes of MCP_MAX_BODY_BYTES and FILES_MAX_BYTES).
 */

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  [k: string]: any;
};

export interface GatewayRoute {
  method: string;
  /** As registered, with `:param` segments. */
  path: string;
  /** The source file that registers it, relative to the repository. */
  source: string;
}

const NEST_METHOD = /@(Get|Post|Put|Delete|Patch|Head|Options|All)\(\s*(?:'([^']*)')?\s*\)/g;
const FASTIFY_ROUTE =
  /\b(?:scope|fastify|instance)\.(get|put|post|head|delete|patch)\(\s*([A-Za-z_]\w*|'[^']*'|`[^`]*`)/g;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? tsFiles(join(dir, e.name))
      : e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

/**
 * Every HTTP route of the gateway's public port, read from its sources: the Nest
 * controllers (`@Controller('prefix')` and the method decorators under it) and the routes
 * registered on Fastify directly (the signed file URLs), whose path constants are
 * resolved from the sources too. A route whose path cannot be resolved throws, so that
 * a new kind of registration is noticed here rather than left unchecked.
 */
export function gatewayRoutes(root: string): GatewayRoute[] {
  const files = tsFiles(join(root, 'apps/gateway/src'));
  const texts = new Map(files.map((f) => [f, readFileSync(f, 'utf8')]));
  const constants = new Map<string, string>();
  for (const text of texts.values())
    for (const [, name, value] of text.matchAll(/export const ([A-Z_]+) = '([^']*)';/g)) constants.set(name, value);

  const routes: GatewayRoute[] = [];
  for (const [file, text] of texts) {
    const source = relative(root, file);
    const controller = /@Controller\(\s*(?:'([^']*)')?\s*\)/.exec(text);
    if (controller) {
      for (const [, method, sub] of text.matchAll(NEST_METHOD)) {
        const path = `/${[controller[1], sub].filter(Boolean).join('/')}`;
        routes.push({ method: method.toUpperCase(), path, source });
      }
    }
    for (const [, method, arg] of text.matchAll(FASTIFY_ROUTE)) {
      let template = arg;
      if (/^\w+$/.test(arg)) template = new RegExp(`const ${arg} = (\`[^\`]*\`|'[^']*')`).exec(text)?.[1] ?? '';
      const path = template.slice(1, -1).replace(/\$\{(\w+)\}/g, (whole, name: string) => constants.get(name) ?? whole);
      if (!path.startsWith('/') || path.includes('${'))
        throw new Error(`${source}: cannot resolve the path of ${method.toUpperCase()} ${arg}`);
      routes.push({ method: method.toUpperCase(), path, source });
    }
  }
  return routes;
}

/** A request path for a route: each `:param` segment filled in. */
export const samplePath = (path: string): string => path.replace(/:[A-Za-z]+/g, 'x1');

/** Which limits a route needs: the signed upload URL (FILES_*), an MCP endpoint (MCP_*), or neither. */
export function routeKind(r: GatewayRoute): 'upload' | 'mcp' | 'other' {
  if (r.method === 'PUT' && r.source.includes('/files/')) return 'upload';
  if (r.source.includes('/src/mcp/')) return 'mcp';
  return 'other';
}

/** The gateway settings the edge is held to, in the units of the env classes. */
export interface EdgeSettings {
  CALL_TIMEOUT_MAX_MS: number;
  MCP_MAX_BODY_BYTES: number;
  FILES_MAX_BYTES: number;
  FILES_UPLOAD_TIMEOUT_MS: number;
  /** https://host[:port] clients reach the gateway at (FILES_PUBLIC_BASE_URL, PUBLIC_BASE_URL). */
  publicUrls: string[];
}

/** An nginx size ("1m", "100m", "512k", "1048576"; "0" is no limit) in bytes. */
export function nginxBytes(size: string | undefined): number | undefined {
  const m = /^(\d+)([kKmMgG]?)$/.exec(size ?? '');
  if (!m) return undefined;
  const scale = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2].toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Number(m[1]) === 0 ? Infinity : Number(m[1]) * scale;
}

const segments = (p: string) => p.split('/').filter(Boolean);
/** Ingress `Prefix` and Gateway API `PathPrefix`: whole path elements (`/api/v1/files` does not match `/api/v1/filesx`). */
function prefixMatches(prefix: string, path: string): boolean {
  const a = segments(prefix);
  const b = segments(path);
  return a.length <= b.length && a.every((s, i) => s === b[i]);
}

const INGRESS_NGINX = 'nginx.ingress.kubernetes.io/';

/** The Ingress path nginx picks for a request: an Exact match first, then the longest Prefix, over every Ingress of the host. */
function ingressFor(ingresses: Obj[], host: string, path: string) {
  let best: { ingress: Obj; rule: any; score: number } | undefined;
  for (const ingress of ingresses)
    for (const r of ingress.spec.rules ?? []) {
      if (r.host !== host) continue;
      for (const p of r.http?.paths ?? []) {
        const exact = p.pathType === 'Exact' && p.path === path;
        if (!exact && !(p.pathType === 'Prefix' && prefixMatches(p.path, path))) continue;
        const score = exact ? Infinity : p.path.length;
        if (!best || score > best.score) best = { ingress, rule: p, score };
      }
    }
  return best;
}

/** The rule of a set of HTTPRoutes a request goes to: an Exact path first, then the longest PathPrefix, then one that names the method. */
function routeRuleFor(routes: Obj[], host: string, method: string, path: string) {
  let best: { route: Obj; rule: Rule; score: [number, number] } | undefined;
  for (const route of routes) {
    const hostnames: string[] = route.spec.hostnames ?? [];
    if (hostnames.length && !hostnames.includes(host)) continue;
    for (const rule of route.spec.rules as Rule[]) {
      const matches: Match[] = rule.matches?.length ? rule.matches : [{ path: { type: 'PathPrefix', value: '/' } }];
      for (const m of matches) {
        const { type = 'PathPrefix', value = '/' } = m.path ?? {};
        if (m.method && m.method !== method) continue;
        const exact = type === 'Exact' && value === path;
        if (!exact && !(type === 'PathPrefix' && prefixMatches(value, path))) continue;
        const score: [number, number] = [exact ? Infinity : value.length, m.method ? 1 : 0];
        if (!best || score[0] > best.score[0] || (score[0] === best.score[0] && score[1] > best.score[1]))
          best = { route, rule, score };
      }
    }
  }
  return best;
}

/**
 * Everything wrong with how `objects` publish the gateway (empty: all good). `routes`:
 * what the gateway serves; `settings`: its limits as the rendered ConfigMaps set them.
 */
export function edgeProblems(objects: Obj[], routes: GatewayRoute[], settings: EdgeSettings): string[] {
  const problems: string[] = [];
  const ingresses = objects.filter((o) => o.kind === 'Ingress');
  const httpRoutes = objects.filter((o) => o.kind === 'HTTPRoute');
  if (!ingresses.length && !httpRoutes.length) return ['neither an Ingress nor an HTTPRoute publishes the gateway'];
  const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'gateway');
  const httpPort = service?.spec.ports?.find((p: any) => p.name === 'http');
  if (!httpPort) problems.push('Service/gateway has no port named http');
  const hosts = [...new Set(settings.publicUrls.map((u) => new URL(u).hostname))];
  const https = settings.publicUrls.some((u) => u.startsWith('https:'));
  const seconds = (o: Obj, key: string) => Number(o.metadata.annotations?.[INGRESS_NGINX + key] ?? NaN);

  for (const ingress of ingresses) {
    const at = `Ingress/${ingress.metadata.name}`;
    if (ingress.spec.ingressClassName !== 'nginx')
      problems.push(`${at}: ingressClassName must be nginx (its annotations are ingress-nginx's)`);
    for (const r of ingress.spec.rules ?? [])
      if (!hosts.includes(r.host)) problems.push(`${at}: host ${r.host} is not the public one (${hosts.join(', ')})`);
    if (https && !hosts.every((h) => (ingress.spec.tls ?? []).some((t: any) => t.hosts?.includes(h))))
      problems.push(`${at}: the public URL is https, but TLS does not cover ${hosts.join(', ')}`);
    for (const r of ingress.spec.rules ?? [])
      for (const p of r.http?.paths ?? []) {
        const b = p.backend?.service;
        if (b?.name !== 'gateway' || !(b.port?.name === 'http' || b.port?.number === httpPort?.port))
          problems.push(`${at}: ${p.path} goes to ${b?.name}:${b?.port?.name ?? b?.port?.number}, not gateway:http`);
        if (!['Prefix', 'Exact'].includes(p.pathType))
          problems.push(
            `${at}: ${p.path} is ${p.pathType}; use Prefix or Exact (ImplementationSpecific means regex paths to nginx)`,
          );
      }
  }
  for (const route of httpRoutes) {
    const at = `HTTPRoute/${route.metadata.name}`;
    const names: string[] = route.spec.hostnames ?? [];
    if (!hosts.every((h) => names.includes(h)))
      problems.push(`${at}: hostnames ${names.join(', ')} lack ${hosts.join(', ')}`);
    for (const rule of route.spec.rules as Rule[])
      for (const b of rule.backendRefs ?? [])
        if (b.name !== 'gateway' || (b.kind ?? 'Service') !== 'Service' || b.port !== httpPort?.port)
          problems.push(
            `${at}: a rule goes to ${b.kind ?? 'Service'} ${b.name}:${b.port}, not Service gateway:${httpPort?.port}`,
          );
  }

  const callSeconds = settings.CALL_TIMEOUT_MAX_MS / 1000;
  const uploadSeconds = settings.FILES_UPLOAD_TIMEOUT_MS / 1000;
  for (const r of routes) {
    const request = `${r.method} ${r.path}`;
    const path = samplePath(r.path);
    const kind = routeKind(r);
    for (const host of ingresses.length ? hosts : []) {
      const found = ingressFor(ingresses, host, path);
      if (!found) {
        problems.push(`${request}: no Ingress path of ${host} routes it`);
        continue;
      }
      const ing = found.ingress;
      const at = `${request} (Ingress/${ing.metadata.name})`;
      const a = (key: string) => ing.metadata.annotations?.[INGRESS_NGINX + key];
      if (a('proxy-buffering') !== 'off') problems.push(`${at}: proxy-buffering must be "off" (SSE)`);
      for (const key of ['proxy-read-timeout', 'proxy-send-timeout']) {
        const s = seconds(ing, key);
        if (!(s > callSeconds))
          problems.push(`${at}: ${key} ${a(key)} s, not above CALL_TIMEOUT_MAX_MS (${callSeconds} s)`);
        if (kind === 'upload' && !(s > uploadSeconds))
          problems.push(`${at}: ${key} ${a(key)} s, not above FILES_UPLOAD_TIMEOUT_MS (${uploadSeconds} s)`);
      }
      const body = nginxBytes(a('proxy-body-size'));
      if (kind === 'upload') {
        if (body !== settings.FILES_MAX_BYTES)
          problems.push(
            `${at}: proxy-body-size ${a('proxy-body-size')} is not FILES_MAX_BYTES (${settings.FILES_MAX_BYTES})`,
          );
        if (a('proxy-request-buffering') !== 'off')
          problems.push(`${at}: proxy-request-buffering must be "off" (uploads stream)`);
      } else if (kind === 'mcp' && body !== settings.MCP_MAX_BODY_BYTES) {
        problems.push(
          `${at}: proxy-body-size ${a('proxy-body-size')} is not MCP_MAX_BODY_BYTES (${settings.MCP_MAX_BODY_BYTES})`,
        );
      } else if (!(body !== undefined && body >= settings.MCP_MAX_BODY_BYTES)) {
        problems.push(
          `${at}: proxy-body-size ${a('proxy-body-size')} is below MCP_MAX_BODY_BYTES (${settings.MCP_MAX_BODY_BYTES})`,
        );
      }
    }
    for (const host of httpRoutes.length ? hosts : []) {
      const found = routeRuleFor(httpRoutes, host, r.method, path);
      if (!found) {
        problems.push(`${request}: no HTTPRoute rule for ${host} routes it`);
        continue;
      }
      const at = `${request} (HTTPRoute/${found.route.metadata.name})`;
      const { request: total, backendRequest } = found.rule.timeouts ?? {};
      if (total === undefined) {
        problems.push(`${at}: no timeouts.request (unset, it is the implementation's: Envoy's is 15 s)`);
        continue;
      }
      // A session's GET stream lasts as long as the session: no finite timeout of the whole exchange fits it.
      if (kind === 'mcp' && r.method === 'GET' && durationMs(total) !== 0)
        problems.push(`${at}: timeouts.request ${total} would cut the session's stream; use 0s`);
      const floor =
        kind === 'upload'
          ? Math.max(settings.CALL_TIMEOUT_MAX_MS, settings.FILES_UPLOAD_TIMEOUT_MS)
          : settings.CALL_TIMEOUT_MAX_MS;
      for (const [name, value] of [
        ['request', total],
        ['backendRequest', backendRequest],
      ] as const) {
        if (value === undefined) continue;
        const ms = durationMs(value);
        if (Number.isNaN(ms)) problems.push(`${at}: timeouts.${name} ${value} is not a duration`);
        else if (ms !== 0 && ms <= floor)
          problems.push(
            `${at}: timeouts.${name} ${value} is not above ${kind === 'upload' ? 'FILES_UPLOAD_TIMEOUT_MS and ' : ''}CALL_TIMEOUT_MAX_MS (${floor / 1000} s)`,
          );
      }
    }
  }
  return problems;
}
