import createClient from 'openapi-fetch';
// Generated at test time from GET /api/v1/openapi.json by openapi-typescript (gitignored, never edited).
import type { paths } from '../.generated/public-api';

/**
 * The public REST surface through a client typed from its OpenAPI document, the
 * way a user's would be. Type-checked by `tsc -p rest-client.tsconfig.json`
 * (rest-client.e2e.spec.ts runs it once the types are generated): a document
 * that loses a path, a parameter or a schema fails here before any request.
 */
export function publicClient(baseUrl: string, apiKey: string) {
  return createClient<paths>({ baseUrl, headers: { 'X-Agent-API-Key': apiKey } });
}

export type PublicClient = ReturnType<typeof publicClient>;

export async function invoke(client: PublicClient, agentId: string, tool: string, args: Record<string, unknown>) {
  const { data, error, response } = await client.POST('/api/v1/agents/{agent_id}/invoke', {
    params: { path: { agent_id: agentId } },
    body: { tool, arguments: args },
  });
  // Typed by the document: a 200's result (a 202 is a call's state; an event stream is text), a problem's.
  const result: { call_id: string; is_error: boolean; output: Record<string, unknown> } | undefined =
    typeof data === 'object' && 'is_error' in data ? data : undefined;
  const problem: { type: string; status: number; code: number; detail: string } | undefined = error;
  return { result, problem, status: response.status, contentType: response.headers.get('content-type') };
}

export async function listTools(client: PublicClient, agentId: string) {
  const { data, response } = await client.GET('/api/v1/agents/{agent_id}/tools', {
    params: { path: { agent_id: agentId } },
  });
  const names: string[] | undefined = data?.tools.map((tool) => tool.name);
  return { data, names, status: response.status, contentType: response.headers.get('content-type') };
}

/** The control: were the generated types `any`, these directives would be unused, and tsc would fail. */
export function typesAreReal(client: PublicClient) {
  // @ts-expect-error not a route of the document
  void client.GET('/api/v1/agents/{agent_id}/secrets', { params: { path: { agent_id: 'a' } } });
  // @ts-expect-error `tool` is required
  void client.POST('/api/v1/agents/{agent_id}/invoke', { params: { path: { agent_id: 'a' } }, body: {} });
}
