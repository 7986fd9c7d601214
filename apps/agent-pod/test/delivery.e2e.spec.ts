import { connectMcp, scrapeMetric, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ACK_WAIT_MS = 1_500;

type Slept = { slept_ms: number; pod_id: string };

/** JetStream delivery to agent pods: shared work, at-least-once through a crash. */
describe('delivery to agent pods', () => {
  let env: TestStack;
  let mcp: McpConnection;

  beforeAll(async () => {
    env = await startTestStack({ pods: 2, podEnv: { INBOX_ACK_WAIT_MS: String(ACK_WAIT_MS), LOG_LEVEL: 'debug' } });
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
  });

  afterAll(async () => {
    await mcp?.close();
    await env?.stop();
  });

  it('two pods of one agent share the calls', async () => {
    const calls = Array.from({ length: 24 }, () => mcp.client.callTool({ name: 'sleep', arguments: { ms: 150 } }));
    const pods = (await Promise.all(calls)).map((r) => (r.structuredContent as Slept).pod_id);
    const perPod = Object.fromEntries(['pod-1', 'pod-2'].map((id) => [id, pods.filter((p) => p === id).length]));
    expect(perPod['pod-1'] + perPod['pod-2']).toBe(24);
    expect(perPod['pod-1']).toBeGreaterThan(0);
    expect(perPod['pod-2']).toBeGreaterThan(0);
  });

  it('a pod killed between receiving and answering loses no call: the other pod answers on redelivery', async () => {
    const pods = env.stack.processes.filter((p) => p.name.startsWith('agent-pod'));
    const startedBefore = new Set(
      pods.flatMap((p) => p.logs.filter((l) => l.msg === 'skill started').map((l) => l.message_id)),
    );
    const isNewStart = (line: Record<string, unknown>) =>
      line.msg === 'skill started' && line.skill === 'sleep' && !startedBefore.has(line.message_id);

    const redeliveriesBefore = await Promise.all(
      pods.map((p) => scrapeMetric(p.managementUrl!, 'mcpgw_inbox_redeliveries_total')),
    );
    const call = mcp.client.callTool({ name: 'sleep', arguments: { ms: 2_000 } }, undefined, { timeout: 30_000 });
    // Whichever pod took the message: kill it while the skill runs (no reply, no ack).
    const started = await Promise.any(pods.map((p) => p.waitForLog(isNewStart, 10_000).then((line) => ({ p, line }))));
    await started.p.kill();

    const result = await call;
    const survivor = pods.find((p) => p !== started.p)!;
    const answeredBy = (result.structuredContent as Slept).pod_id;
    expect(answeredBy).not.toBe(started.line.pod_id);
    const redelivered = await survivor.waitForLog(
      (l) => l.msg === 'skill started' && l.message_id === started.line.message_id,
      1_000,
    );
    expect(Number(redelivered.redeliveries)).toBeGreaterThanOrEqual(1);
    // Counted on /metrics by the pod that got it again.
    const survivorBefore = redeliveriesBefore[pods.indexOf(survivor)];
    expect(await scrapeMetric(survivor.managementUrl!, 'mcpgw_inbox_redeliveries_total')).toBeGreaterThan(
      survivorBefore,
    );
    expect(result.content).toEqual([{ type: 'text', text: 'slept 2000 ms' }]);
  });
});
