import { startTestStack, type LogLine, type TestStack } from '@mcpgw/devstack';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Logs (libs/observability/README.md): pino JSON lines that carry the request
 * id (X-Request-Id, taken or made, and echoed) and the trace id, and never a
 * secret: not an API key, not its secret part, not a RuntimeGrant, on any path
 * of any process. The stack runs at debug level, where every answered request
 * is logged with its headers, and with tracing on, exporting to a receiver
 * that accepts and drops the spans.
 */

const VERSION = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'logs-test', version: '1.0.0' },
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function startSpanSink(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      req.method === 'POST' && req.url === '/v1/traces'
        ? res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
        : res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('logs', () => {
  let sink: Awaited<ReturnType<typeof startSpanSink>>;
  let env: TestStack;
  let grant: string;
  const ws = 'demo';
  /** Every secret this file shows the gateway; none may reach a log line. */
  const secrets: string[] = [];
  const keep = (...values: string[]) => (secrets.push(...values), values[0]);
  /** `bak_<id>_<secret>`: the key, and its secret part alone. */
  const keepKey = (key: string) => keep(key, key.slice('bak_'.length + 13));

  const gateway = () => env.stack.serving(env.gatewayUrls[0]);
  const allLines = () => env.stack.processes.flatMap((p) => p.logs);
  const linesOf = (requestId: string) => gateway().logs.filter((l) => l.request_id === requestId);

  const callTool = (text: string, headers: Record<string, string>) =>
    fetch(env.mcpUrl(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-agent-api-key': env.apiKey,
        'mcp-protocol-version': VERSION,
        'mcp-method': 'tools/call',
        'mcp-name': 'echo',
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text }, _meta: META },
      }),
    });
  const grantCall = (token: string, headers: Record<string, string> = {}) =>
    fetch(`${env.gatewayUrls[0]}/workspaces/${ws}/agents/${env.agentId}/mcp/http`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'req_call',
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'by grant' } },
      }),
    });

  beforeAll(async () => {
    sink = await startSpanSink();
    env = await startTestStack({
      env: { LOG_LEVEL: 'debug', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
    });
    keepKey(env.apiKey);
    const minted = await env.stack.admin<{ grant: string }>(
      'grant',
      'mint',
      '--workspace',
      ws,
      '--agent',
      env.agentId,
      '--task',
      'T-logs',
      '--tools',
      'echo',
    );
    grant = keep(minted.grant);
  });

  afterAll(async () => {
    await env?.stop();
    sink?.server.close();
  });

  it("a tools/call's request id comes back, and its gateway lines carry it and the trace id", async () => {
    // The key is in the arguments too: the result carries it, no log line may.
    // A header the logger has no name for holds the key as well: only its shape can give it away.
    const response = await callTool(`my key is ${env.apiKey}`, {
      'X-Request-Id': 'test-req-123',
      'x-client-note': `retrying with ${env.apiKey} and ${grant}`,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('test-req-123');
    const body = await response.text();
    expect(body).toContain('my key is');
    const callId = /"mcpgw\/callId":"(call_[0-9a-f]{32})"/.exec(body)?.[1];
    expect(callId).toBeDefined();

    await gateway().waitForLog((l) => l.request_id === 'test-req-123' && l.msg === 'request done', 5_000);
    const lines = linesOf('test-req-123');
    const call = lines.find((l) => l.msg === 'tools/call');
    expect(call).toMatchObject({
      level: 'debug',
      service: 'gateway',
      context: 'CallRunner',
      tool: 'echo',
      trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    // The call's last line names it by the id the client got (issue 28).
    expect(lines.find((l) => l.msg === 'tools/call done')).toMatchObject({ call_id: callId, outcome: 'ok' });
    // The whole call is one trace: the lines in the span share it.
    const traced = lines.filter((l) => l.trace_id);
    expect(new Set(traced.map((l) => l.trace_id))).toEqual(new Set([call!.trace_id]));
    // The access line has the headers, the credentials among them redacted.
    const done = lines.find((l) => l.msg === 'request done') as LogLine & { headers: Record<string, string> };
    expect(done).toMatchObject({ status: 200, path: `/${env.agentId}/mcp`, method: 'POST' });
    expect(done.headers['x-agent-api-key']).toBe('[redacted]');
    expect(done.headers['x-request-id']).toBe('test-req-123');
    expect(done.headers['x-client-note']).toBe(`retrying with bak_${env.apiKeyId}_… and [jwt]`);
    // The message service and the pod log the same call with its request id and trace id,
    // carried in the NATS headers (Mcpgw-Request-Id, traceparent) and passed to their lines.
    const traceId = call!.trace_id;
    const messageService = env.stack.processes.find((p) => p.name.startsWith('message-service'))!;
    const ms = await messageService.waitForLog(
      (l) => l.msg === 'post and wait done' && l.request_id === 'test-req-123',
      5_000,
    );
    expect(ms).toMatchObject({ service: 'message-service', status: 'replied', trace_id: traceId });
    const pod = env.stack.processes.find((p) => p.name.startsWith('agent-pod'))!;
    for (const msg of ['skill started', 'skill answered']) {
      const line = await pod.waitForLog((l) => l.msg === msg && l.request_id === 'test-req-123', 5_000);
      expect(line).toMatchObject({ service: 'agent-pod', skill: 'echo', trace_id: traceId });
    }
    // Only this call's lines carry its request id.
    const others = env.stack.processes
      .filter((p) => !p.name.startsWith('gateway'))
      .flatMap((p) => p.logs)
      .filter((l) => l.request_id === 'test-req-123');
    expect(new Set(others.map((l) => l.trace_id))).toEqual(new Set([traceId]));
  });

  it('a grant call has its request id in the header and on its log lines', async () => {
    const response = await grantCall(grant, { 'X-Request-Id': 'test-req-grant' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('test-req-grant');
    await gateway().waitForLog((l) => l.request_id === 'test-req-grant' && l.msg === 'request done', 5_000);
    expect(linesOf('test-req-grant').find((l) => l.msg === 'tools/call')).toMatchObject({
      surface: 'grant',
      trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
  });

  it('makes a request id when there is none, or when the one given is not safe to log', async () => {
    const made = (await callTool('no id', {})).headers.get('x-request-id');
    expect(made).toMatch(UUID);
    const unsafe = await callTool('bad id', { 'X-Request-Id': `a b"${'x'.repeat(200)}` });
    expect(unsafe.headers.get('x-request-id')).toMatch(UUID);
    // Errors too: an unknown route, a bad grant.
    const missing = await fetch(`${env.gatewayUrls[0]}/no/such/route`, { headers: { 'X-Request-Id': 'test-404' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-request-id')).toBe('test-404');
    await gateway().waitForLog((l) => l.request_id === made, 5_000);
  });

  it('writes no secret on the error paths: a revoked key, a bad grant, a key where a grant belongs', async () => {
    const revoked = await env.stack.admin<{ id: string; key: string }>('apikey', 'create', '--agent', env.agentId);
    keepKey(revoked.key);
    expect((await callTool('before revoking', { 'x-agent-api-key': revoked.key })).status).toBe(200);
    await env.stack.admin('apikey', 'revoke', revoked.id);
    await expect
      .poll(async () => (await callTool('after', { 'x-agent-api-key': revoked.key, 'X-Request-Id': 'rv' })).status)
      .toBe(401);

    const tampered = keep(`${grant.slice(0, -4)}${grant.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`);
    const badGrant = await grantCall(tampered, { 'X-Request-Id': 'test-bad-grant' });
    expect(badGrant.status).toBe(401);
    expect(badGrant.headers.get('x-request-id')).toBe('test-bad-grant');
    expect((await grantCall(env.apiKey)).status).toBe(401);
    expect((await callTool('grant as key', { 'x-agent-api-key': grant })).status).toBe(401);
    await gateway().waitForLog((l) => l.request_id === 'test-bad-grant' && l.msg === 'request done', 5_000);
  });

  it('no line of any process holds a secret', async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const lines = allLines();
    expect(lines.length).toBeGreaterThan(50);
    expect(new Set(lines.map((l) => l.service))).toEqual(new Set(['gateway', 'message-service', 'agent-pod']));
    const text = lines.map((l) => JSON.stringify(l)).join('\n');
    expect(secrets.length).toBe(6); // two keys and their secret parts, a grant, a forged one
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+\./);
  });
});
