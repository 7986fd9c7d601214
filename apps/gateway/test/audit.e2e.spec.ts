import { connectMcp, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/idempotency/fingerprint';
import { startOtlpReceiver, type OtlpReceiver } from './support/otlp-receiver';

interface AuditRow {
  chain: string;
  seq: number;
  kind: string;
  surface: string | null;
  principal: string | null;
  agent_id: string | null;
  tool: string | null;
  call_id: string | null;
  outcome: string | null;
  error_code: string | null;
  duration_ms: number | null;
  replayed: boolean | null;
  arguments_digest: string | null;
  arguments: unknown;
  detail: Record<string, unknown> | null;
  hash: string;
}

const digestOf = (args: Record<string, unknown>) => createHash('sha256').update(canonicalJson(args)).digest('hex');

/**
 * The audit trail (apps/gateway/src/audit/README.md) on a running stack: calls
 * on MCP surfaces A and B and on REST, admin actions of the CLI, refused
 * credentials, all chained; `audit verify` passes, names a row changed or
 * deleted in SQL, and every row and anchor reaches an OTLP/HTTP logs endpoint.
 */
describe('the audit trail', () => {
  let env: TestStack;
  let otlp: OtlpReceiver;
  let db: Client;
  let mcp: McpConnection;
  const audit = (...flags: string[]) =>
    env.stack.admin<{ items: AuditRow[] }>('audit', 'list', '--agent', env.agentId, '--limit', '1000', ...flags);
  const calls = async () => (await audit('--kind', 'tool_call')).items;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    env = await startTestStack({
      env: { AUDIT_FLUSH_INTERVAL_MS: '50', AUDIT_REFUSAL_WINDOW_SECONDS: '1' },
      gatewayEnv: { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `${otlp.url}/v1/logs` },
    });
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
  }, 180_000);

  afterAll(async () => {
    await mcp?.close();
    await db?.end();
    await env?.stop();
    otlp?.server.close();
  });

  it('records a call on each surface with who, what and how it ended; the arguments only as a digest', async () => {
    await mcp.client.callTool({ name: 'echo', arguments: { text: 'surface A' } });
    const grant = await env.stack.admin<{ grant: string }>(
      'grant',
      'mint',
      '--workspace',
      'demo',
      '--agent',
      env.agentId,
      '--task',
      'audit-task',
      '--tools',
      'echo',
    );
    const b = await fetch(`${env.gatewayUrls[0]}/workspaces/demo/agents/${env.agentId}/mcp/http`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${grant.grant}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'surface B' } },
      }),
    });
    expect(b.status).toBe(200);
    const rest = await fetch(`${env.gatewayUrls[0]}/api/v1/agents/${env.agentId}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-agent-api-key': env.apiKey },
      body: JSON.stringify({ tool: 'echo', arguments: { text: 'REST' } }),
    });
    expect(rest.status).toBe(200);
    const restCallId = ((await rest.json()) as { call_id: string }).call_id;
    const a2a = await fetch(`${env.gatewayUrls[0]}/a2a/${env.agentId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-agent-api-key': env.apiKey },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: {
            messageId: `audit-${Date.now()}`,
            role: 'ROLE_USER',
            metadata: { skill: 'echo' },
            parts: [{ data: { text: 'A2A' } }],
          },
        },
      }),
    });
    const a2aCallId = ((await a2a.json()) as { result: { message: { metadata: Record<string, string> } } }).result
      .message.metadata['mcpgw/callId'];
    // An error: a tool that does not exist.
    await mcp.client.callTool({ name: 'no_such_tool', arguments: {} }).catch(() => undefined);

    await expect.poll(async () => (await calls()).length, { timeout: 10_000 }).toBe(5);
    const rows = await calls();
    const bySurface = Object.fromEntries(rows.map((row) => [`${row.surface}:${row.tool}`, row]));
    expect(Object.keys(bySurface).sort()).toEqual([
      'a2a:echo',
      'agent:echo',
      'agent:no_such_tool',
      'grant:echo',
      'rest:echo',
    ]);
    expect(bySurface['agent:echo']).toMatchObject({
      principal: `apikey:${env.apiKeyId}`,
      agent_id: env.agentId,
      outcome: 'ok',
      error_code: null,
      replayed: false,
      call_id: expect.stringMatching(/^call_/),
      arguments_digest: digestOf({ text: 'surface A' }),
      arguments: null,
    });
    expect(bySurface['agent:echo'].duration_ms).toBeGreaterThanOrEqual(0);
    expect(bySurface['grant:echo']).toMatchObject({ principal: expect.stringContaining('audit-task'), outcome: 'ok' });
    expect(bySurface['rest:echo']).toMatchObject({ call_id: restCallId, arguments_digest: digestOf({ text: 'REST' }) });
    expect(bySurface['a2a:echo']).toMatchObject({
      principal: `apikey:${env.apiKeyId}`,
      call_id: a2aCallId,
      outcome: 'ok',
      arguments_digest: digestOf({ text: 'A2A' }),
    });
    expect(bySurface['agent:no_such_tool']).toMatchObject({ outcome: 'tool_not_found', error_code: 'tool_not_found' });
    // The filters: by tool and by outcome.
    expect((await audit('--tool', 'no_such_tool')).items).toHaveLength(1);
    expect((await audit('--kind', 'tool_call', '--outcome', 'ok')).items).toHaveLength(4);
  }, 120_000);

  it('records admin actions (key created, revoked) and refused credentials, per source and window', async () => {
    const key = await env.stack.admin<{ id: string; key: string }>(
      'apikey',
      'create',
      '--agent',
      env.agentId,
      '--label',
      'audited',
    );
    await env.stack.admin('apikey', 'revoke', key.id);
    for (let i = 0; i < 5; i++) {
      const refused = await fetch(env.mcpUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-agent-api-key': `${key.key}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      expect(refused.status).toBe(401);
    }
    // The newest two (the stack's own set-up and the grant above are older actions).
    const actions = (
      await env.stack.admin<{ items: AuditRow[] }>('audit', 'list', '--kind', 'admin_action', '--limit', '2')
    ).items;
    expect(actions.map((a) => [a.principal, a.detail?.action, a.outcome])).toEqual([
      ['cli', 'apikey revoke', 'ok'],
      ['cli', 'apikey create', 'ok'],
    ]);
    expect(actions[1]).toMatchObject({
      agent_id: env.agentId,
      detail: { target: { agent: env.agentId, label: 'audited' } },
    });
    expect(actions[0].detail).toMatchObject({ target: { ids: [key.id] } });
    // The key itself is on no row.
    const everything = JSON.stringify(
      (await env.stack.admin<{ items: AuditRow[] }>('audit', 'list', '--limit', '1000')).items,
    );
    expect(everything).not.toContain(key.key);

    // One row per source and window: five refusals in a row make one row, or two when they
    // straddle a window's end on a slow machine, never a row each.
    const refusals = async () =>
      (await env.stack.admin<{ items: AuditRow[] }>('audit', 'list', '--kind', 'auth_failure')).items;
    const counted = (rows: AuditRow[]) => rows.reduce((sum, row) => sum + Number(row.detail?.count ?? 0), 0);
    await expect.poll(async () => counted(await refusals()), { timeout: 15_000 }).toBe(5);
    const rows = await refusals();
    expect(rows.length).toBeLessThan(5);
    for (const row of rows)
      expect(row).toMatchObject({
        surface: 'mcp-a',
        principal: expect.stringContaining('127.0.0.1'),
        outcome: 'refused',
        error_code: '401',
        detail: expect.objectContaining({ window_seconds: expect.any(Number) }),
      });
  }, 120_000);

  it('audit verify passes, then names a row changed in SQL, and a row deleted', async () => {
    const verify = () => env.stack.adminRun('audit', 'verify');
    const intact = await verify();
    expect(intact.code).toBe(0);
    expect(intact.stdout).toMatch(/^audit trail intact: \d+ rows in \d+ chains/);

    const { rows } = await db.query<{ chain: string; seq: number; tool: string }>(
      `SELECT chain, seq, tool FROM audit.records WHERE kind = 'tool_call' AND tool = 'echo' ORDER BY at LIMIT 1`,
    );
    const [target] = rows;
    await db.query(`UPDATE audit.records SET tool = 'web_search' WHERE chain = $1 AND seq = $2`, [
      target.chain,
      target.seq,
    ]);
    const changed = await verify();
    expect(changed.code).toBe(3);
    expect(changed.stdout).toContain(`chain ${target.chain} row ${target.seq}: its content does not match its hash`);
    await db.query(`UPDATE audit.records SET tool = $3 WHERE chain = $1 AND seq = $2`, [
      target.chain,
      target.seq,
      target.tool,
    ]);
    expect((await verify()).code).toBe(0);

    const { rows: middle } = await db.query<{ chain: string; seq: number }>(
      `SELECT chain, seq FROM audit.records r WHERE seq > 1 AND EXISTS (SELECT 1 FROM audit.records n WHERE n.chain = r.chain AND n.seq = r.seq + 1) LIMIT 1`,
    );
    await db.query(`DELETE FROM audit.records WHERE chain = $1 AND seq = $2`, [middle[0].chain, middle[0].seq]);
    const deleted = await verify();
    expect(deleted.code).toBe(3);
    expect(deleted.stdout).toContain(`chain ${middle[0].chain} row ${middle[0].seq}: row ${middle[0].seq} is missing`);
  }, 120_000);

  it('exports valid JSON lines, and every written row reached the OTLP logs endpoint with its hash', async () => {
    const exported = await env.stack.adminRun('audit', 'export', '--since', '1h', '--format', 'jsonl');
    expect(exported.code).toBe(0);
    const lines = exported.stdout.trimEnd().split('\n');
    const records = lines.map((line) => JSON.parse(line) as AuditRow);
    expect(records.length).toBeGreaterThanOrEqual(7);
    expect(records.every((r) => /^[0-9a-f]{64}$/.test(r.hash))).toBe(true);

    // The gateway's own rows (the CLI's are exported by nobody: the CLI has no OTLP endpoint here).
    const { rows } = await db.query<{ hash: string }>(`SELECT hash FROM audit.records WHERE kind <> 'admin_action'`);
    await expect
      .poll(
        () =>
          otlp.logs
            .filter((log) => log.eventName?.startsWith('mcpgw.audit.'))
            .map((log) => log.attributes['mcpgw.audit.hash']),
        {
          timeout: 10_000,
        },
      )
      .toEqual(expect.arrayContaining(rows.map((row) => row.hash)));
    const call = otlp.logs.find((log) => log.eventName === 'mcpgw.audit.tool_call')!;
    expect(call.service).toBe('gateway');
    expect(JSON.parse(call.body!)).toMatchObject({ kind: 'tool_call', agent_id: env.agentId });
  }, 120_000);
});
