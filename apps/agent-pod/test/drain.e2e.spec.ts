import { connectMcp, startTestStack, type McpConnection, type ServiceProcess, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type Slept = { slept_ms: number; pod_id: string };

/**
 * The skill the pod past its grace is running: longer than a second pod takes to start on a
 * loaded machine (it starts after the first pod took the message), far shorter than the ack
 * wait, so a redelivery by the ack wait instead of the hand-back is later than every bound.
 */
const SKILL_MS = 20_000;
const ACK_WAIT_MS = String(120_000);

/**
 * SIGTERM drains a pod (libs/runtime/README.md): it stops pulling from its
 * inbox, lets its running skills finish and their replies go out, and exits 0.
 * A skill that outlives SHUTDOWN_GRACE_MS is stopped and its message naked:
 * another pod runs it at once. No call is lost, none answered twice.
 */
describe('an agent pod told to stop', () => {
  let env: TestStack;
  let mcp: McpConnection;

  beforeAll(async () => {
    env = await startTestStack({ podEnv: { LOG_LEVEL: 'debug', INBOX_ACK_WAIT_MS: ACK_WAIT_MS } });
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
  });

  afterAll(async () => {
    await mcp?.close();
    await env?.stop();
  });

  const startedOn = (pod: ServiceProcess, since = 0) =>
    pod.waitForLog((l) => l.msg === 'skill started' && l.skill === 'sleep', 10_000, 'skill started', since);

  it('finishes the skill it runs, the call is answered, and it exits 0', async () => {
    const pod = env.stack.processes.find((p) => p.name.startsWith('agent-pod'))!;
    const call = mcp.client.callTool({ name: 'sleep', arguments: { ms: 2_000 } }, undefined, { timeout: 30_000 });
    await startedOn(pod);

    const stopped = Date.now();
    const exit = pod.stop(30_000);
    await expect
      .poll(async () => (await fetch(`${pod.managementUrl}/ready`)).status, { timeout: 1_000, interval: 20 })
      .toBe(503);
    const result = await call;
    expect(result.content).toEqual([{ type: 'text', text: 'slept 2000 ms' }]);
    expect((result.structuredContent as Slept).pod_id).toBe('pod-1');
    await exit;
    const exitedAfter = Date.now() - stopped;
    console.log(`pod drain: exited ${await pod.exited} after ${exitedAfter} ms`);
    expect(await pod.exited).toBe(0);
    expect(exitedAfter).toBeLessThan(5_000);
  });

  it(
    'past a short grace, hands the message back: another pod answers it, nothing is run twice',
    { timeout: 120_000 },
    async () => {
      const quick = await env.stack.startPod({
        POD_ID: 'pod-quick',
        LOG_LEVEL: 'debug',
        SHUTDOWN_GRACE_MS: '300',
        INBOX_ACK_WAIT_MS: ACK_WAIT_MS,
      });
      // A skill far longer than the grace, so that a pod that waited for it is told apart from one that
      // did not even on a loaded machine; the bounds below stay well under the ack wait.
      const call = mcp.client.callTool({ name: 'sleep', arguments: { ms: SKILL_MS } }, undefined, { timeout: 90_000 });
      const first = await startedOn(quick);
      // Only now a second pod, so that the message went to the first.
      const second = await env.stack.startPod({
        POD_ID: 'pod-second',
        LOG_LEVEL: 'debug',
        INBOX_ACK_WAIT_MS: ACK_WAIT_MS,
      });

      const stopped = Date.now();
      await quick.stop(10_000);
      const exitedAfter = Date.now() - stopped;
      expect(await quick.exited).toBe(0); // handed back: a clean drain
      await quick.waitForLog((l) => l.msg === 'handed back' && l.message_id === first.message_id, 1_000);

      const result = await call;
      const answeredAfter = Date.now() - stopped;
      console.log(
        `pod past its grace: exited after ${exitedAfter} ms; call answered by the other pod after ${answeredAfter} ms`,
      );
      expect((result.structuredContent as Slept).pod_id).toBe('pod-second');
      expect(result.content).toEqual([{ type: 'text', text: `slept ${SKILL_MS} ms` }]);
      expect(exitedAfter).toBeLessThan(SKILL_MS / 2);
      // Redelivered at once (a nak), not after the ack wait; run once to its end, on the second pod only.
      const rerun = await startedOn(second);
      expect(rerun.message_id).toBe(first.message_id);
      expect(answeredAfter).toBeLessThan(SKILL_MS + 30_000);
      expect(quick.logs.filter((l) => l.msg === 'skill answered')).toEqual([]);
      expect(second.logs.filter((l) => l.msg === 'skill answered' && l.message_id === first.message_id)).toHaveLength(
        1,
      );
    },
  );
});
