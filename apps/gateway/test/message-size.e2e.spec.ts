import { startTestStack, type TestStack } from '@mcpgw/devstack';
import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
/** NATS's default max_payload, and the gateway's default MCP_MAX_BODY_BYTES: the same 1 MiB. */
const MIB = 1_048_576;

/**
 * A body the gateway reads must fit on the bus once wrapped as a chat_message:
 * the HTTP limit is capped below NATS's max_payload, so a call that cannot
 * travel gets 413 before anything is stored or posted, and one that can, runs.
 */
describe('the message size the gateway accepts is what the bus carries', () => {
  let env: TestStack;
  let db: Client;

  /** A tools/call of `echo` whose body is `bytes` long (the text pads it). */
  const echoBody = (bytes: number, args: Record<string, unknown> = {}) => {
    const frame = (text: string) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text, ...args } },
      });
    const body = frame('x'.repeat(bytes - frame('').length));
    expect(body.length).toBe(bytes);
    return body;
  };
  const post = async (body: string) => {
    const response = await fetch(env.mcpUrl(), {
      method: 'POST',
      headers: { ...HEADERS, 'x-agent-api-key': env.apiKey },
      body,
    });
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text) };
  };
  const stored = async () => {
    const { rows } = await db.query(
      `SELECT (SELECT count(*) FROM messaging.messages)::int AS messages,
              (SELECT count(*) FROM gateway.idempotency_records)::int AS records`,
    );
    return rows[0] as { messages: number; records: number };
  };

  beforeAll(async () => {
    env = await startTestStack();
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await env?.stop();
  });

  it('a body under MCP_MAX_BODY_BYTES that cannot travel on the bus gets 413 -32600, and nothing is stored', async () => {
    const before = await stored();
    // Under the configured 1 MiB, but with the envelope around it over NATS's 1 MiB.
    const answer = await post(echoBody(MIB - 4_096, { idempotency_key: randomUUID() }));
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(await stored()).toEqual(before);
  });

  it('a large call that fits runs end to end and comes back whole', async () => {
    // echo answers with the text twice (content and structuredContent): the reply must fit too.
    const text = 'y'.repeat(400_000);
    const answer = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text } } }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body.result.content).toEqual([{ type: 'text', text }]);
  });

  it("a result too large for the bus is a tool error at once, not a timeout: the call's text went in, twice its size would come out", async () => {
    const text = 'z'.repeat(600_000);
    const started = Date.now();
    const answer = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text }, _meta: { 'mcpgw/timeoutMs': 20_000 } },
      }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body.result).toMatchObject({ isError: true });
    expect(answer.body.result.content[0].text).toMatch(/too large to deliver/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
