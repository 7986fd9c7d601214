/**
 * The console's pages, by hash route. The navigation is drawn from NAV. A
 * list's filters and page are in the route's query (`#/calls?outcome=failed`).
 */
export interface NavEntry {
  label: string;
  href: string;
  /** The routes that light this entry up. */
  match: RegExp;
}

export const NAV: NavEntry[] = [
  { label: 'Overview', href: '#/', match: /^\/$/ },
  { label: 'Agents', href: '#/agents', match: /^\/agents/ },
  { label: 'Keys and grants', href: '#/keys', match: /^\/keys/ },
  { label: 'Webhooks', href: '#/webhooks', match: /^\/webhooks/ },
  { label: 'Calls', href: '#/calls', match: /^\/calls/ },
  { label: 'Channels', href: '#/channels', match: /^\/channels/ },
  { label: 'Playground', href: '#/playground', match: /^\/playground/ },
  { label: 'Audit trail', href: '#/audit', match: /^\/audit/ },
  { label: 'Tool changes', href: '#/tool-changes', match: /^\/tool-changes/ },
];

export type Page =
  | { page: 'overview' }
  | { page: 'agents' }
  | { page: 'agent'; agentId: string }
  | { page: 'keys'; agentId: string }
  | { page: 'quotas'; agentId: string }
  | { page: 'webhooks'; agentId?: string }
  | { page: 'deliveries'; webhookId: string }
  | { page: 'playground'; agentId?: string; tool?: string }
  | { page: 'calls'; query: string }
  | { page: 'call'; callId: string }
  | { page: 'channels'; query: string }
  | { page: 'channel'; channelId: string; query: string }
  | { page: 'keys-and-grants' }
  | { page: 'audit'; query: string }
  | { page: 'tool-changes'; query: string }
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
  if (first === 'playground' && parts.length <= 3) return { page: 'playground', agentId: id, tool: sub };
  if (first === 'calls' && !id) return { page: 'calls', query };
  if (first === 'calls' && id && parts.length === 2) return { page: 'call', callId: id };
  if (first === 'channels' && !id) return { page: 'channels', query };
  if (first === 'channels' && id && parts.length === 2) return { page: 'channel', channelId: id, query };
  if (first === 'audit' && !id) return { page: 'audit', query };
  if (first === 'tool-changes' && !id) return { page: 'tool-changes', query };
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
