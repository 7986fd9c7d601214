/**
 * The management API as the console calls it: same origin, the session cookie
 * sent by the browser, and on every change the CSRF token read from its cookie
 * (double submit; apps/gateway/src/admin-api/README.md). Nothing here keeps a
 * secret: not the admin token (sent once, to log in), not a new API key.
 */
export const CSRF_COOKIE = '__Host-mcpgw_admin_csrf';
const SAFE = new Set(['GET', 'HEAD']);

/** A refusal of the API, with its stable code (docs/admin-openapi.yaml, Error). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The session's CSRF token, read from its cookie (sent as X-CSRF-Token with every change). */
export function csrfToken(): string | undefined {
  for (const pair of document.cookie.split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === CSRF_COOKIE) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/** Called when an answer says the session is gone (401): the app goes back to the login. */
export let onUnauthorized: () => void = () => undefined;
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const csrf = csrfToken();
  if (!SAFE.has(method) && csrf) headers['x-csrf-token'] = csrf;
  const response = await fetch(`/admin/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  const answer = (await response.json().catch(() => ({}))) as T & { error?: { code: string; message: string } };
  if (!response.ok) {
    const error = answer.error ?? { code: 'internal', message: `HTTP ${response.status}` };
    if (response.status === 401 && path !== '/session') onUnauthorized();
    throw new ApiError(response.status, error.code, error.message);
  }
  return answer;
}

/** A path segment: ids go through encodeURIComponent, never raw. */
export const seg = (value: string): string => encodeURIComponent(value);

export interface Session {
  token_id: string;
  via: 'token' | 'session';
  expires_at: string | null;
}
export interface Agent {
  id: string;
  workspace_id: string;
  created_at: string;
  tools: number;
  /** Pods online now: heard within 3 of their heartbeat intervals, and not leaving. */
  pods_online: number;
}
/** `GET /agents`: the agents, and how many have at least one pod online. */
export interface AgentList {
  items: Agent[];
  agents_online: number;
}
export interface Pod {
  pod_id: string;
  registered_at: string;
  last_seen_at: string;
  online: boolean;
}
export interface Tool {
  id: string;
  name: string;
  definition: { name: string; description: string; input_schema: object } & Record<string, unknown>;
}
export interface AgentDetail {
  id: string;
  workspace_id: string;
  created_at: string;
  auth_methods: { api_keys: boolean; oauth: boolean };
  tools: Tool[];
  resources: object[];
  resource_templates: object[];
  prompts: object[];
  completions: boolean;
  /** The agent's pods, the most recently seen first (at most 256; forgotten after a day unseen). */
  pods: Pod[];
  last_registered_at: string | null;
}
export interface ApiKey {
  id: string;
  agent_id: string;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}
export interface Webhook {
  id: string;
  agent_id: string;
  owner: string | null;
  url: string;
  events: string[];
  created_at: string;
  disabled_at: string | null;
  disabled_reason: string | null;
  failing_since: string | null;
  last_error: string | null;
}
export interface Delivery {
  id: string;
  webhook_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  created_at: string;
  next_attempt_at: string | null;
  finished_at: string | null;
  last_error: string | null;
}
export const QUOTA_LIMITS = ['concurrent_calls', 'calls_per_second', 'sessions', 'streams'] as const;
export type QuotaLimit = (typeof QUOTA_LIMITS)[number];
export interface Quotas {
  agent_id: string;
  limits: Record<QuotaLimit, number>;
  overrides: Record<QuotaLimit, number | null>;
  defaults: Record<QuotaLimit, number>;
}
export interface List<T> {
  items: T[];
}
export interface Pat {
  id: string;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}
export interface MintedGrant {
  id: string;
  grant: string;
  workspace_id: string;
  agent_id: string;
  task_id: string;
  tools: string[];
  credentials: string[];
  expires_at: string;
}
