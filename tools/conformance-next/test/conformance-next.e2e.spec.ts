import { startTestStack, workspaceRoot, type TestStack } from '@mcpgw/devstack';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_22, checksNotPassing, node22, startKeyProxy } from '../../conformance/test/harness';

/**
 * The newer MCP conformance suite (0.2.0-alpha.12, pinned in its own lock file
 * here, beside 0.1.16 in tools/conformance) against the running stack, through
 * the bus, once for each revision it can require: exactly the scenarios
 * `--requirements <revision>` names. It runs on the Node 22 installed in
 * tools/conformance, behind the same key-adding proxy. What still fails is
 * listed, one reason each, in `expected-failures.<revision>.yml`: a scenario
 * (or check) not listed that fails, or a listed one that passes, fails the
 * suite's exit code and so this test.
 */
const HERE = join(workspaceRoot(), 'tools', 'conformance-next');
const SUITE = join(HERE, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

describe('the 2026-07-28 conformance suite against the stack, through the bus', () => {
  let env: TestStack;
  let proxy: Awaited<ReturnType<typeof startKeyProxy>>;

  beforeAll(async () => {
    if (!existsSync(SUITE)) execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: HERE, stdio: 'inherit' });
    if (!existsSync(NODE_22))
      execFileSync('npm', ['ci', '--no-audit', '--no-fund'], {
        cwd: join(HERE, '..', 'conformance'),
        stdio: 'inherit',
      });
    env = await startTestStack();
    proxy = await startKeyProxy(env.gatewayUrls[0], env.apiKey);
  });

  afterAll(async () => {
    await proxy?.close();
    await env?.stop();
  });

  it.each(['2025-11-25', '2026-07-28'])(
    'every scenario --requirements %s names passes but the expected failures',
    async (revision) => {
      const out = mkdtempSync(join(tmpdir(), `mcpgw-conformance-${revision}-`));
      const started = Date.now();
      const run = await node22(
        [
          SUITE,
          'server',
          '--url',
          `${proxy.url}/${env.agentId}/mcp`,
          '--requirements',
          revision,
          '--expected-failures',
          join(HERE, `expected-failures.${revision}.yml`),
          '-o',
          out,
        ],
        240_000,
      );
      const problems = checksNotPassing(out);
      rmSync(out, { recursive: true, force: true });
      const summary = `${run.stdout.slice(run.stdout.indexOf('=== SUMMARY ==='))}\n${problems.join('\n')}`;
      process.stdout.write(`--requirements ${revision}: ${Math.round((Date.now() - started) / 1000)} s\n${summary}\n`);
      expect(summary, 'the conformance suite did not finish').toContain('Total:');
      expect(run.code, `${summary}\n${run.stderr.slice(-2000)}`).toBe(0);
    },
    300_000,
  );
});
