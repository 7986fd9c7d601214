import type { BusIdentity } from '@mcpgw/bus';
import { AgentPresence, BusPattern, subject } from '@mcpgw/contracts';
import { freePort, startTestStack, type ServiceProcess, type TestStack } from '@mcpgw/devstack';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, type AdminJson } from './support/admin-client';
import { ResponseChecker, loadAdminOpenApi } from './support/admin-openapi';

const ADMIN_PORT = await freePort();
/** Short heartbeats: a pod killed is offline within 3 intervals plus the gateway's 2 s write delay. */
const INTERVAL_MS = 500;
const OFFLINE_WITHIN_MS = 3 * INTERVAL_MS + 2_000 + 2_000;
const HOSTILE = 'hostile-pods';
const PODS_MAX = 256;

/**
 * Pods and presence (issue 29): each pod's registration is stored and its
 * heartbeats keep it online, as the management API shows; a pod killed goes
 * offline after 3 intervals, a pod drained at once. A hostile agent with its
 * own NATS credentials cannot speak for another agent's pods, and cannot make
 * the gateway keep more than 256 pods of its own.
 */
describe('agent pods and presence', () => {
  const checker = new ResponseChecker(loadAdminOpenApi());
  let env: TestStack;
  let token: string;
  let prefix: string;
  const opened: NatsConnection[] = [];
  const admin = adminClient(`http://127.0.0.1:${ADMIN_PORT}`, checker, () => token);
  const pods = async (agentId: string) =>
    (await admin<AdminJson>('GET', '/admin/v1/agents/{agentId}', { params: { agentId } })).body;
  const pod = async (agentId: string, podId: string) =>
    ((await pods(agentId)).pods as AdminJson[]).find((p) => p.pod_id === podId);
  const podProcess = (n: number): ServiceProcess =>
    env.stack.processes.filter((p) => p.name.startsWith('agent-pod'))[n - 1];

  const connectAs = async (identity: BusIdentity) => {
    const nc = await env.nats!.connectAs(identity);
    opened.push(nc);
    return nc;
  };
  const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

  beforeAll(async () => {
    env = await startTestStack({
      pods: 3,
      podEnv: { PRESENCE_INTERVAL_MS: String(INTERVAL_MS) },
      gatewayEnv: { ADMIN_PORT: String(ADMIN_PORT) },
    });
    prefix = env.stack.settings.busPrefix;
    token = (await env.stack.admin<{ token: string }>('console', 'token', '--label', 'pods-e2e')).token;
  }, 90_000);

  afterAll(async () => {
    for (const nc of opened) await nc.close().catch(() => undefined);
    await env?.stop();
  });

  it('shows every pod online with its registration time, and the agent among the agents online', async () => {
    await expect.poll(async () => (await pods(env.agentId)).pods.length, { timeout: 15_000 }).toBe(3);
    const detail = await pods(env.agentId);
    for (const p of detail.pods as AdminJson[]) {
      expect(p.pod_id).toMatch(/^pod-[123]$/);
      expect(p.online).toBe(true);
      expect(Date.parse(p.registered_at)).toBeLessThanOrEqual(Date.parse(p.last_seen_at));
    }
    expect(detail.last_registered_at).toBe(
      (detail.pods as AdminJson[])
        .map((p) => p.registered_at as string)
        .sort()
        .at(-1),
    );
    // Heartbeats move last_seen_at on, registered_at stays.
    const before = (await pod(env.agentId, 'pod-1'))!;
    await expect
      .poll(async () => Date.parse((await pod(env.agentId, 'pod-1'))!.last_seen_at), { timeout: 10_000 })
      .toBeGreaterThan(Date.parse(before.last_seen_at));
    expect((await pod(env.agentId, 'pod-1'))!.registered_at).toBe(before.registered_at);
    const list = (await admin<AdminJson>('GET', '/admin/v1/agents')).body;
    expect(list.agents_online).toBeGreaterThanOrEqual(1);
    expect((list.items as AdminJson[]).find((a) => a.id === env.agentId)!.pods_online).toBe(3);
    // The CLI's list counts them too.
    const cliList = await env.stack.admin<AdminJson[]>('agent', 'list');
    expect(cliList.find((a) => a.id === env.agentId)!.pods_online).toBe(3);
    // `agent show` shares the API's operation: the same pods, registered when the API says.
    const shown = await env.stack.admin<AdminJson>('agent', 'show', '--agent', env.agentId);
    const registered = (view: AdminJson) =>
      (view.pods as AdminJson[]).map((p) => [p.pod_id, p.registered_at, p.online]).sort();
    expect(registered(shown)).toEqual(registered(await pods(env.agentId)));
    expect(shown.last_registered_at).toBe(detail.last_registered_at);
  });

  it('sees a pod that was killed (SIGKILL) go offline after 3 intervals, not before the first', async () => {
    const killed = Date.now();
    await podProcess(3).kill();
    expect((await pod(env.agentId, 'pod-3'))!.online).toBe(true);
    await expect
      .poll(async () => (await pod(env.agentId, 'pod-3'))!.online, { timeout: OFFLINE_WITHIN_MS })
      .toBe(false);
    expect(Date.now() - killed).toBeGreaterThanOrEqual(3 * INTERVAL_MS);
    expect((await pod(env.agentId, 'pod-1'))!.online).toBe(true);
  });

  it('sees a pod that drains (SIGTERM) go offline at once: it says it is leaving', async () => {
    const stopped = Date.now();
    const exit = podProcess(2).stop(20_000);
    // Within the gateway's write delay, well before 3 intervals would have passed after the exit.
    await expect
      .poll(async () => (await pod(env.agentId, 'pod-2'))!.online, { timeout: 4_000, interval: 100 })
      .toBe(false);
    const offlineAfter = Date.now() - stopped;
    await exit;
    expect(offlineAfter).toBeLessThan(3 * INTERVAL_MS + 1_500);
    expect((await pod(env.agentId, 'pod-1'))!.online).toBe(true);
  });

  it("refuses a hostile agent's presence for another agent's pod (NATS permissions)", async () => {
    const hostile = await connectAs({ role: 'agent', agentId: HOSTILE });
    const errors: string[] = [];
    void (async () => {
      for await (const status of hostile.status()) if (status.type === 'error') errors.push(String(status.data));
    })();
    // As pod-3 of the stack's agent (killed above): if it got through, pod-3 would be online for 30 minutes.
    for (let i = 0; i < 5; i++) {
      hostile.publish(
        AgentPresence.subject(prefix, env.agentId),
        json({ pod_id: 'pod-3', state: 'up', interval_ms: 600_000 }),
      );
    }
    await hostile.flush();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await pod(env.agentId, 'pod-3'))!.online).toBe(false);
    expect(errors.join(' ')).toMatch(/permissions.violation/i);
  });

  it('keeps at most 256 pods of one agent, however many pod ids it makes up, and refuses bad ones', async () => {
    const hostile = await connectAs({ role: 'agent', agentId: HOSTILE });
    const register = async (podId: string) => {
      const answer = await hostile.request(
        subject(prefix, BusPattern.RegisterAgent.replace('*', HOSTILE)),
        json({ workspace_id: 'demo', agent_id: HOSTILE, pod_id: podId, skills: [] }),
        { timeout: 5_000 },
      );
      return answer.json<{ ok: boolean; error?: { code: string } }>();
    };
    expect(await register('a b')).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    for (let i = 0; i < PODS_MAX + 44; i++) expect((await register(`flood-${i}`)).ok).toBe(true);
    // Heartbeats for pods it never registered store nothing.
    for (let i = 0; i < 1_000; i++) {
      hostile.publish(
        AgentPresence.subject(prefix, HOSTILE),
        json({ pod_id: `ghost-${i}`, state: 'up', interval_ms: 600_000 }),
      );
    }
    await hostile.flush();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const kept = (await pods(HOSTILE)).pods as AdminJson[];
    expect(kept).toHaveLength(PODS_MAX);
    const ids = new Set(kept.map((p) => p.pod_id));
    // The least recently seen went first: the newest are all there, the oldest not.
    expect(ids.has(`flood-${PODS_MAX + 43}`)).toBe(true);
    expect(ids.has('flood-0')).toBe(false);
    expect([...ids].some((id) => id.startsWith('ghost-'))).toBe(false);
    expect(await register('flood-0')).toMatchObject({ ok: true });
    expect(((await pods(HOSTILE)).pods as AdminJson[]).length).toBe(PODS_MAX);
  }, 120_000);
});
