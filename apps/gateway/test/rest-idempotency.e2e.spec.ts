import { startTestStack, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type Answer = { status: number; text: string; body: any; replayed: string | null };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** `idempotency_key` on the REST invoke, and one key space with MCP tools/call (idempotency/README.md). */
describe('REST invoke idempotency', () => {
  let env: TestStack;
  let unique = 0;
  const fresh = (label: string) => `${label}-${Date.now()}-${unique++}`;

  const answer = async (response: Response): Promise<Answer> => {
    const text = await response.text();
    return {
      status: response.status,
      text,
      body: JSON.parse(text),
      replayed: response.headers.get('idempotent-replayed'),
    };
  };
  const rest = async (body: Record<string, unknown>) =>
    answer(
      await fetch(`${env.gatewayUrls[0]}/api/v1/agents/${env.agentId}/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-agent-api-key': env.apiKey },
        body: JSON.stringify(body),
      }),
    );
  const mcp = async (args: Record<string, unknown>) =>
    answer(
      await fetch(env.mcpUrl(0), {
        method: 'POST',
        headers: { ...MCP_HEADERS, 'x-agent-api-key': env.apiKey },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'counter', arguments: args },
        }),
      }),
    );
  /** How many times the agent really ran `counter` for this key: one more plain call tells. */
  const executions = async (counterKey: string) =>
    (await rest({ tool: 'counter', arguments: { key: counterKey } })).body.output.count - 1;

  beforeAll(async () => {
    env = await startTestStack();
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('a retry with the same key gets the first answer byte for byte, marked by header only, and runs once', async () => {
    const counterKey = fresh('rest-seq');
    const body = { tool: 'counter', arguments: { key: counterKey }, idempotency_key: fresh('idem') };
    const first = await rest(body);
    const retry = await rest(body);
    expect(first.status, first.text).toBe(200);
    expect(first.replayed).toBeNull();
    expect(retry.status).toBe(200);
    expect(retry.replayed).toBe('true');
    expect(retry.text).toBe(first.text);
    expect(first.body.output.count).toBe(1);
    expect(await executions(counterKey)).toBe(1);
  });

  it('concurrent requests with one key run the tool once and get the same answer', async () => {
    const counterKey = fresh('rest-race');
    const body = { tool: 'counter', arguments: { key: counterKey, delay_ms: 300 }, idempotency_key: fresh('idem') };
    const answers = await Promise.all([rest(body), rest(body), rest(body)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers.filter((a) => a.replayed === 'true')).toHaveLength(2);
    expect(await executions(counterKey)).toBe(1);
  });

  it('the same key with another body is 422 idempotency-key-reused, and nothing runs', async () => {
    const counterKey = fresh('rest-reuse');
    const key = fresh('idem');
    expect((await rest({ tool: 'counter', arguments: { key: counterKey }, idempotency_key: key })).status).toBe(200);
    const reused = await rest({ tool: 'counter', arguments: { key: counterKey, delay_ms: 1 }, idempotency_key: key });
    expect(reused.status).toBe(422);
    expect(reused.body).toMatchObject({ type: 'urn:mcpgw:problem:idempotency-key-reused', code: -32602 });
    const otherTool = await rest({ tool: 'echo', arguments: { text: 'x' }, idempotency_key: key });
    expect(otherTool.status).toBe(422);
    expect(await executions(counterKey)).toBe(1);
  });

  it('MCP first, then REST with the key: the same call, in REST shape, never run again', async () => {
    const counterKey = fresh('mcp-then-rest');
    const key = fresh('idem');
    const first = await mcp({ key: counterKey, idempotency_key: key });
    expect(first.body.result.structuredContent.count).toBe(1);
    const retry = await rest({ tool: 'counter', arguments: { key: counterKey }, idempotency_key: key });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.replayed).toBe('true');
    expect(retry.body).toMatchObject({
      call_id: first.body.result._meta['mcpgw/callId'],
      tool: 'counter',
      output: { key: counterKey, count: 1 },
      is_error: false,
    });
    // And MCP again still gets its own stored text.
    const again = await mcp({ key: counterKey, idempotency_key: key });
    expect(again.replayed).toBe('true');
    expect(again.body.result.structuredContent.count).toBe(1);
    // Another body under the key is refused on both surfaces.
    expect((await rest({ tool: 'counter', arguments: { key: 'other' }, idempotency_key: key })).status).toBe(422);
    expect(await executions(counterKey)).toBe(1);
  });

  it('REST first, then MCP with the key: the MCP result, marked a replay; another body is -32602', async () => {
    const counterKey = fresh('rest-then-mcp');
    const key = fresh('idem');
    const first = await rest({ tool: 'counter', arguments: { key: counterKey }, idempotency_key: key });
    expect(first.status).toBe(200);
    const retry = await mcp({ key: counterKey, idempotency_key: key });
    expect(retry.replayed).toBe('true');
    expect(retry.body.result.structuredContent).toMatchObject({ key: counterKey, count: 1 });
    expect(retry.body.result._meta).toEqual({ 'mcpgw/callId': first.body.call_id, 'mcpgw/idempotentReplay': true });
    const reused = await mcp({ key: 'something else', idempotency_key: key });
    expect(reused.body.error).toMatchObject({ code: -32602, data: { reason: 'idempotency_key_reused' } });
    // REST's own replay is still byte for byte the first answer.
    expect((await rest({ tool: 'counter', arguments: { key: counterKey }, idempotency_key: key })).text).toBe(
      first.text,
    );
    expect(await executions(counterKey)).toBe(1);
  });
});
