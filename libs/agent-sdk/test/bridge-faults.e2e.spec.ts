import {
  connectMcp,
  startBridgeProcess,
  startTestStack,
  workspaceRoot,
  type McpConnection,
  type TestStack,
} from '@mcpgw/devstack';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const AGENT = 'slow';
const root = workspaceRoot();
const SERVER = join(root, 'libs/agent-sdk/test/fixtures/slow-server.mjs');
const ACK_WAIT_MS = 2_000;

/**
 * The bridge when things go wrong, with a stdio server of the test's own
 * (fixtures/slow-server.mjs) that marks each run and each cancellation: a
 * cancel reaches the server; of two bridge processes, one killed mid-call
 * leaves the call to the other when the tool is idempotent, and to a clear
 * error, never a second run, when it is not.
 */
describe('the bridge under faults', () => {
  let env: TestStack;
  let markers: string;
  let mcp: McpConnection;
  const bridges: ChildProcess[] = [];

  const startBridge = async (): Promise<ChildProcess> => {
    const bridge = await startBridgeProcess(
      env,
      AGENT,
      { command: [process.execPath, SERVER], env: ['MARKERS'] },
      {
        INBOX_ACK_WAIT_MS: String(ACK_WAIT_MS),
        MARKERS: markers,
      },
    );
    bridges.push(bridge);
    return bridge;
  };
  const running = () => bridges.filter((b) => b.exitCode === null && b.signalCode === null);
  const runsOf = (key: string) => {
    const path = join(markers, `started-${key}`);
    return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
  };
  /** Kill, as a node dies, the bridge whose server runs this call (its process group: bridge and server). */
  const killBridgeRunning = async (key: string) => {
    await expect.poll(() => runsOf(key).length, { timeout: 10_000 }).toBe(1);
    const group = Number(execFileSync('ps', ['-o', 'pgid=', '-p', runsOf(key)[0]], { encoding: 'utf8' }).trim());
    const bridge = bridges.find((b) => b.pid === group)!;
    expect(bridge).toBeDefined();
    const exited = new Promise((resolve) => bridge.once('exit', resolve));
    process.kill(-group, 'SIGKILL');
    await exited;
  };

  beforeAll(async () => {
    markers = mkdtempSync(join(tmpdir(), 'mcpgw-bridge-faults-'));
    env = await startTestStack({ pods: 0, podEnv: { AGENT_ID: AGENT } });
    await startBridge();
    await startBridge();
    mcp = await connectMcp(env.mcpUrl(0, AGENT), env.apiKey);
  }, 180_000);

  afterAll(async () => {
    await mcp?.close();
    for (const bridge of running()) process.kill(-bridge.pid!, 'SIGKILL');
    await env?.stop();
    rmSync(markers, { recursive: true, force: true });
  });

  it("a client's cancellation reaches the server (notifications/cancelled)", async () => {
    const abort = new AbortController();
    const call = mcp.client
      .callTool({ name: 'slow', arguments: { key: 'cancel', ms: 30_000 } }, undefined, { signal: abort.signal })
      .catch((e: Error) => e);
    await expect.poll(() => runsOf('cancel').length, { timeout: 10_000 }).toBe(1);
    abort.abort('the user gave up');
    await call;
    await expect.poll(() => existsSync(join(markers, 'cancelled-cancel')), { timeout: 10_000 }).toBe(true);
  });

  it('one of two bridges killed mid-call: an idempotent call completes on the other', async () => {
    expect(running()).toHaveLength(2);
    const call = mcp.client.callTool({ name: 'slow', arguments: { key: 'idempotent', ms: 1_500 } });
    await killBridgeRunning('idempotent');
    const result = await call;
    const [first, second] = runsOf('idempotent');
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect(result.content).toEqual([{ type: 'text', text: `slow idempotent done in ${second}` }]);
  });

  it('one of two bridges killed mid-call: a tool not idempotent gets a clear error and never runs twice, retried with its idempotency key too', async () => {
    if (running().length < 2) await startBridge();
    const args = { key: 'write', ms: 1_500, idempotency_key: 'bridge-write-1' };
    const call = mcp.client.callTool({ name: 'slow_write', arguments: args });
    await killBridgeRunning('write');
    const result = await call;
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain(
      'was interrupted (the bridge running it stopped) and is not run again',
    );
    const retried = await mcp.client.callTool({ name: 'slow_write', arguments: args });
    expect(retried.content).toEqual(result.content);
    expect(runsOf('write')).toHaveLength(1);
  });
});
