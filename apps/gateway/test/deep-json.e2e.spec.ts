import { startTestStack, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A body nested 100,000 levels deep parses (JSON.parse does not recurse) but
 * overflowed the stack further on and answered 500. Both surfaces now refuse
 * it as a request, 400 -32600, and keep serving.
 */
const DEEP = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;

describe('a 100,000-deep JSON body', () => {
  let env: TestStack;
  let grant: string;

  const surfaces = () => ({
    'A /{agent}/mcp': {
      url: `${env.gatewayUrls[0]}/demo-agent/mcp`,
      headers: { 'x-agent-api-key': env.apiKey, accept: 'application/json, text/event-stream' },
    },
    'B /workspaces/{ws}/agents/{agent}/mcp/http': {
      url: `${env.gatewayUrls[0]}/workspaces/demo/agents/demo-agent/mcp/http`,
      headers: { authorization: `Bearer ${grant}` },
    },
  });
  const post = async (surface: 'A /{agent}/mcp' | 'B /workspaces/{ws}/agents/{agent}/mcp/http', body: string) => {
    const { url, headers } = surfaces()[surface];
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text) as { result?: unknown; error?: { code: number } } };
  };
  const call = (args: string) =>
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","deep":${args}}}}`;

  beforeAll(async () => {
    env = await startTestStack();
    grant = (
      await env.stack.admin<{ grant: string }>(
        'grant',
        'mint',
        '--workspace',
        'demo',
        '--agent',
        'demo-agent',
        '--task',
        'deep',
        '--tools',
        'echo',
      )
    ).grant;
  });

  afterAll(async () => env?.stop());

  it.each(['A /{agent}/mcp', 'B /workspaces/{ws}/agents/{agent}/mcp/http'] as const)(
    'is refused with 400 -32600 on %s, as the body or in the arguments, and the gateway keeps serving',
    async (surface) => {
      for (const body of [DEEP, call(DEEP)]) {
        const answer = await post(surface, body);
        expect(answer.status).toBe(400);
        expect(answer.body.error).toMatchObject({ code: -32600 });
      }
      const fine = await post(surface, call('[[["still fine"]]]'));
      expect(fine.status).toBe(200);
      expect(fine.body.result).toBeDefined();
    },
    60_000,
  );
});
