import createClient, {
  type ClientPathsWithMethod,
  type FetchOptions,
  type FetchResponse,
  type Middleware,
} from 'openapi-fetch';
import type { components, operations, paths } from './generated/admin-api';

/**
 * The management API as the console calls it: a client generated from
 * docs/admin-openapi.yaml (openapi-fetch over the types openapi-typescript writes
 * to generated/admin-api.d.ts at each build), so a route, a parameter or a field
 * the document does not have is a type error. Same origin, the session cookie
 * sent by the browser, and on every change the CSRF token read from its cookie
 * (double submit; apps/gateway/src/admin-api/README.md). Nothing here keeps a
 * secret: not the admin token (sent once, to log in), not a new API key.
 */
export const CSRF_COOKIE = '__Host-mcpgw_admin_csrf';
const SAFE = new Set(['GET', 'HEAD']);
const BASE = '/admin/v1';

/** The document's paths without their `/admin/v1` prefix, which is the client's base URL. */
type Routes = { [P in keyof paths as P extends `${typeof BASE}${infer Rest}` ? Rest : never]: paths[P] };

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
let onUnauthorized: () => void = () => undefined;
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

/**
 * Every call: the CSRF header on a change; a 401 sends the app back to the login,
 * except from `/session` itself (not logged in yet, or a refused login).
 */
const session: Middleware = {
  onRequest({ request }) {
    const csrf = csrfToken();
    if (!SAFE.has(request.method) && csrf) request.headers.set('x-csrf-token', csrf);
    return request;
  },
  onResponse({ response, schemaPath }) {
    if (response.status === 401 && schemaPath !== '/session') onUnauthorized();
  },
};

/** openapi-fetch's client: its calls infer their options, so a field too many in a body goes unseen. */
export const fetchClient = createClient<Routes>({
  baseUrl: BASE,
  headers: { accept: 'application/json' },
  credentials: 'same-origin',
  cache: 'no-store',
});
fetchClient.use(session);

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';
type Operation<Item, M extends Method> = Extract<Item[M & keyof Item], Record<string | number, unknown>>;
type Options<P extends keyof Routes, M extends Method> = FetchOptions<Operation<Routes[P], M>>;
/** One method of `client`: the options typed from the route, not inferred, so a made-up field of a body is an error too. */
type Call<M extends Method> = <P extends ClientPathsWithMethod<typeof fetchClient, M>>(
  url: P,
  ...options: object extends Options<P, M> ? [Options<P, M>?] : [Options<P, M>]
) => Promise<FetchResponse<Operation<Routes[P], M>, Options<P, M>, 'application/json'>>;

/**
 * The console's client: every page calls the API through it (JSON answers; the
 * playground's stream uses fetchClient). The same object as fetchClient, typed
 * without its inference of the options (TypeScript cannot relate the two signatures).
 */
export const client = fetchClient as unknown as {
  GET: Call<'get'>;
  PUT: Call<'put'>;
  POST: Call<'post'>;
  PATCH: Call<'patch'>;
  DELETE: Call<'delete'>;
};

/** What a call of `client` resolves to, whatever its route. */
export interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The answer's body, or its refusal thrown as ApiError (the API's own code and message). */
export async function ok<T>(pending: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await pending;
  if (response.ok) return data as T;
  const refusal = (error as Partial<Schemas['Error']> | undefined)?.error ?? {
    code: 'internal',
    message: `HTTP ${response.status}`,
  };
  throw new ApiError(response.status, refusal.code, refusal.message);
}

/** The query parameters that have a value: an empty one is left out (the API refuses it). */
export function filled<T extends Record<string, string | number | undefined>>(fields: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== '' && value !== undefined),
  ) as Partial<T>;
}

/** The document's schemas (docs/admin-openapi.yaml, components.schemas), by name. */
export type Schemas = components['schemas'];
/** The JSON body of an operation's 200 answer, for the answers the document does not name. */
export type Answered<Id extends keyof operations> = operations[Id]['responses'] extends {
  200: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

export type Session = Schemas['Session'];
export type Agent = Schemas['Agent'];
export type AgentList = Schemas['AgentList'];
export type Pod = Schemas['Pod'];
export type AgentDetail = Schemas['AgentDetail'];
export type Tool = AgentDetail['tools'][number];
export type ApiKey = Schemas['ApiKey'];
export type Webhook = Schemas['Webhook'];
export type Delivery = Schemas['Delivery'];
export type Quotas = Schemas['Quotas'];
export type QuotaLimit = keyof Schemas['QuotaLimits'];
export const QUOTA_LIMITS = [
  'concurrent_calls',
  'calls_per_second',
  'sessions',
  'streams',
] as const satisfies readonly QuotaLimit[];
export type Pat = Schemas['Pat'];
export type MintedGrant = Schemas['MintedGrant'];
