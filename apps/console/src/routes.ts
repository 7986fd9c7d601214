/**
 * The console's pages, by hash route. The navigation is drawn from NAV: the
 * entries marked `later` are the pages of later steps of issue 29 (calls,
 * channels, the playground, live updates), shown as such until they exist.
 */
export interface NavEntry {
  label: string;
  href: string;
  /** The routes that light this entry up. */
  match: RegExp;
  later?: boolean;
}

export const NAV: NavEntry[] = [
  { label: 'Overview', href: '#/', match: /^\/$/ },
  { label: 'Agents', href: '#/agents', match: /^\/agents/ },
  { label: 'Keys and grants', href: '#/keys', match: /^\/keys/ },
  { label: 'Webhooks', href: '#/webhooks', match: /^\/webhooks/ },
  { label: 'Calls', href: '#/calls', match: /^\/calls/, later: true },
  { label: 'Channels', href: '#/channels', match: /^\/channels/, later: true },
  { label: 'Playground', href: '#/playground', match: /^\/playground/, later: true },
];

export type Page =
  | { page: 'overview' }
  | { page: 'agents' }
  | { page: 'agent'; agentId: string }
  | { page: 'keys'; agentId: string }
  | { page: 'quotas'; agentId: string }
  | { page: 'webhooks'; agentId?: string }
  | { page: 'deliveries'; webhookId: string }
  | { page: 'keys-and-grants' }
  | { page: 'later'; label: string }
  | { page: 'missing' };

/** Which page a route shows. */
export function pageOf(route: string): Page {
  const [path, query = ''] = route.split('?', 2);
  const parts = path.split('/').filter(Boolean).map(decodePart);
  const [first, id, sub] = parts;
  if (parts.length === 0) return { page: 'overview' };
  if (first === 'agents' && !id) return { page: 'agents' };
  if (first === 'keys' && !id) return { page: 'keys-and-grants' };
  if (first === 'agents' && id && !sub) return { page: 'agent', agentId: id };
  if (first === 'agents' && id && sub === 'keys' && parts.length === 3) return { page: 'keys', agentId: id };
  if (first === 'agents' && id && sub === 'quotas' && parts.length === 3) return { page: 'quotas', agentId: id };
  if (first === 'webhooks' && !id) {
    return { page: 'webhooks', agentId: new URLSearchParams(query).get('agent') ?? undefined };
  }
  if (first === 'webhooks' && id && sub === 'deliveries' && parts.length === 3) {
    return { page: 'deliveries', webhookId: id };
  }
  const later = NAV.find((entry) => entry.later && entry.match.test(path));
  if (later) return { page: 'later', label: later.label };
  return { page: 'missing' };
}

/** A route's href, its ids encoded. */
export const href = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join('/')}`;

function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
