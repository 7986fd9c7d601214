import { subject } from '@mcpgw/contracts';
import { connectMcp, freePort, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import {
  DASHBOARDS_DIR,
  dashboardFiles,
  expressionsOf,
  selectorsOf,
  substitute,
  type Dashboard,
} from './grafana/dashboards';
import {
  prometheusInstalled,
  PROMETHEUS_BIN,
  startPrometheus,
  type LivePrometheus,
} from './prometheus/live-prometheus';

/**
 * The dashboards and the rules against what the apps really expose: a real Prometheus
 * (the Debian package's) scrapes every process of a test stack each second and evaluates
 * deploy/observability/prometheus/rules.yml each second, while the official MCP client
 * drives calls (ok, a tool error, an unknown tool, a burst over the quota), a webhook
 * points at a dead loopback port and another at a receiver answering 410, and a malformed
 * notice is published on the bus. Then, through Prometheus's HTTP API:
 *
 * - every PromQL expression of every dashboard panel (variables substituted: `$agent` →
 *   the stack's agent, `$__rate_interval` → 30s) and every recording rule returns at
 *   least one series: a misspelt metric or label returns none (the negative control
 *   runs such typos through the same check);
 * - the latency buckets carry the call's id as an exemplar;
 * - alerts fire: the dead webhook's delivery lag, the 410 endpoint disabled, the bus drop,
 *   and, once the agent's pod is stopped and calls wait in its inbox, pending with no pod
 *   online; alerts of a healthy part (no stream leader, commit errors) stay silent.
 *
 * The rule file is loaded as a copy made here: every `for:` shortened to 1 s, and
 * McpgwWebhookDeliveryLag's 60 s threshold lowered to 5 s, so the alerts fire within
 * the test's time; promtool's unit tests (alert-rules.spec.ts) hold the real durations
 * and thresholds. Skipped, saying so, where no prometheus binary is installed (CI has it).
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const INTERVAL = '30s';
const LAG_THRESHOLD_SECONDS = 5;
const DEAD_PORT = await freePort();
const GONE_PORT = await freePort();

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
}
interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}

const rules = parse(readFileSync(join(root, 'deploy/observability/prometheus/rules.yml'), 'utf8')) as RuleFile;
const records = rules.groups.flatMap((g) => g.rules.flatMap((r) => (r.record ? [r.record] : [])));
const dashboards = dashboardFiles(join(root, DASHBOARDS_DIR)).map(({ text }) => JSON.parse(text) as Dashboard);

/** rules.yml with every `for` at 1 s and the delivery-lag threshold at LAG_THRESHOLD_SECONDS. */
function quickRules(): RuleFile {
  return {
    groups: rules.groups.map((group) => ({
      ...group,
      rules: group.rules.map((rule) => {
        const quick = { ...rule, ...(rule.for ? { for: '1s' } : {}) };
        if (rule.alert === 'McpgwWebhookDeliveryLag') {
          quick.expr = rule.expr.replace(/> 60$/m, `> ${LAG_THRESHOLD_SECONDS}`);
          if (quick.expr === rule.expr) throw new Error(`McpgwWebhookDeliveryLag is no longer "> 60": ${rule.expr}`);
        }
        return quick;
      }),
    })),
  };
}

if (!prometheusInstalled)
  console.warn(
    `observability.e2e.spec.ts skipped: no prometheus at ${PROMETHEUS_BIN} (apt-get install prometheus, or set PROMETHEUS_BIN)`,
  );

describe.skipIf(!prometheusInstalled)('dashboards and alerts against a live Prometheus', () => {
  let env: TestStack;
  let prometheus: LivePrometheus;
  let mcp: McpConnection;
  let gone: Server;
  const echo = (text: string) => mcp.client.callTool({ name: 'echo', arguments: { text } });

  /** The expressions that return no series now. */
  const empty = async (queries: { where: string; expr: string }[]) => {
    const found = await Promise.all(queries.map(async (q) => ({ ...q, series: await prometheus.query(q.expr) })));
    return found.filter((q) => q.series.length === 0).map((q) => `${q.where}: ${q.expr}`);
  };
  const firing = async () =>
    new Set((await prometheus.query('ALERTS{alertstate="firing"}')).map((s) => s.metric.alertname));

  beforeAll(async () => {
    // A receiver that answers 410 Gone: the gateway disables its webhook.
    gone = createServer((_req, res) => res.writeHead(410).end());
    await new Promise<void>((done) => gone.listen(GONE_PORT, '127.0.0.1', done));
    env = await startTestStack({
      env: {
        WEBHOOK_SECRET_KEY: 'observability-e2e-secret-key-0123456789abcdef',
        WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${DEAD_PORT},127.0.0.1:${GONE_PORT}`,
      },
      // A burst of 40 calls at once goes over 20 per second: quota refusals.
      gatewayEnv: { WEBHOOK_POLL_INTERVAL_MS: '200', QUOTA_CALLS_PER_SECOND: '20' },
    });
    prometheus = await startPrometheus({
      targets: env.stack.processes.map((p) => new URL(p.managementUrl!).host),
      rules: quickRules(),
    });
    // Prometheus starts its scrapes some seconds after it is ready: the counters must be seen
    // at 0 before anything moves them, or their first increase is no increase to it.
    await vi.waitFor(
      async () => {
        const up = (await prometheus.query('up == 1')).length;
        if (up !== env.stack.processes.length)
          throw new Error(`${up} of ${env.stack.processes.length} targets scraped`);
      },
      { timeout: 20_000, interval: 200 },
    );
    for (const port of [DEAD_PORT, GONE_PORT])
      await env.stack.admin(
        'webhook',
        'add',
        '--agent',
        env.agentId,
        '--url',
        `http://127.0.0.1:${port}/hook`,
        '--events',
        'tool_call.completed,tool_call.failed',
      );

    mcp = await connectMcp(env.mcpUrl(0), env.apiKey);
    for (let i = 0; i < 8; i++) await echo(`observed ${i}`);
    expect((await mcp.client.callTool({ name: 'fail', arguments: { reason: 'observed' } })).isError).toBe(true);
    await expect(mcp.client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Tool not found/);
    // Past the second of the calls above, then 40 at once: some are refused with 429.
    await new Promise((r) => setTimeout(r, 1_100));
    const burst = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => echo(`burst ${i}`)));
    expect(burst.some((b) => b.status === 'rejected' && /429|Too many requests/.test(String(b.reason)))).toBe(true);

    // A notice that is not JSON: the gateways drop it and count it.
    const nc = await env.connectNats();
    nc.publish(subject(env.stack.settings.busPrefix, `agents.${env.agentId}.notices`), new TextEncoder().encode('{'));
    await nc.flush();
    await nc.close();
  });

  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
    await prometheus?.stop();
    await env?.stop();
    await new Promise((done) => (gone ? gone.close(done) : done(undefined)));
  });

  it('scrapes every process of the stack', async () => {
    expect((await prometheus.query('up == 1')).length).toBe(env.stack.processes.length);
  });

  it('every expression of every dashboard panel returns a series', { timeout: 60_000 }, async () => {
    const queries = dashboards.flatMap((d) =>
      expressionsOf(d).map(({ where, expr }) => ({
        where,
        expr: substitute(expr, { agent: env.agentId, interval: INTERVAL }),
      })),
    );
    expect(queries.length).toBeGreaterThan(40);
    // Each selector alone too: a typo under scalar() or beside `or vector(0)` leaves the whole a result.
    const selectors = [...new Set(queries.flatMap((q) => selectorsOf(q.expr)))];
    queries.push(...selectors.map((expr) => ({ where: 'selector', expr })));
    // Series appear a scrape or two after what makes them (a refusal, a drop, a disabled endpoint).
    await expect.poll(() => empty(queries), { timeout: 30_000, interval: 1_000 }).toEqual([]);
    // The agent variable's query (label_values(mcpgw_tool_calls_total, agent)) lists the stack's agent.
    const agents = await prometheus.api<string[]>(
      `/api/v1/label/agent/values?match[]=${encodeURIComponent('mcpgw_tool_calls_total')}`,
    );
    expect(agents).toContain(env.agentId);
  });

  it('every recording rule returns a series', async () => {
    expect(records.length).toBeGreaterThan(10);
    await expect
      .poll(() => empty(records.map((record) => ({ where: 'rule', expr: record }))), { timeout: 15_000 })
      .toEqual([]);
  });

  it('negative control: a misspelt metric, label or label value returns none through the same check', async () => {
    const typos = [
      `sum by (outcome) (rate(mcpgw_tool_call_total[${INTERVAL}]))`,
      `sum(rate(mcpgw_tool_calls_total{agnet="${env.agentId}"}[${INTERVAL}]))`,
      `sum(rate(mcpgw_tool_calls_total{agent="${env.agentId}-typo"}[${INTERVAL}]))`,
      `max by (state) (mcpgw_webhook_endpoint{state="disabled"})`,
    ].map((expr) => ({ where: 'typo', expr }));
    expect(await empty(typos)).toHaveLength(typos.length);
    // A typo under scalar() leaves the whole a result (NaN); its selectors alone do not.
    const hidden = `sum(rate(mcpgw_tool_calls_total[${INTERVAL}])) / scalar(sum(rate(mcpgw_tool_cals_total[${INTERVAL}])))`;
    expect(await empty([{ where: 'hidden', expr: hidden }])).toEqual([]);
    expect(await empty(selectorsOf(hidden).map((expr) => ({ where: 'selector', expr })))).toEqual([
      'selector: mcpgw_tool_cals_total',
    ]);
    // And the correct spelling of the first one is found: the typo is what made it empty.
    expect(
      await empty([{ where: 'right', expr: `sum by (outcome) (rate(mcpgw_tool_calls_total[${INTERVAL}]))` }]),
    ).toEqual([]);
  });

  it("the latency buckets carry the call's id as an exemplar", async () => {
    const now = Date.now() / 1000;
    const exemplars = await prometheus.api<{ exemplars: { labels: Record<string, string> }[] }[]>(
      `/api/v1/query_exemplars?query=${encodeURIComponent('mcpgw_tool_call_seconds_bucket')}&start=${now - 300}&end=${now}`,
    );
    const ids = exemplars.flatMap((s) => s.exemplars.map((e) => e.labels.call_id));
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
  });

  it(
    'a dead webhook, a 410 receiver and a bus drop fire their alerts; healthy parts stay silent',
    { timeout: 60_000 },
    async () => {
      const expected = ['McpgwWebhookDeliveryLag', 'McpgwWebhookEndpointDisabled', 'McpgwBusDrops'];
      await expect
        .poll(
          async () => {
            const now = await firing();
            return expected.filter((name) => !now.has(name));
          },
          {
            timeout: 45_000,
            interval: 1_000,
          },
        )
        .toEqual([]);
      const now = await firing();
      for (const silent of ['McpgwJetStreamNoLeader', 'McpgwPostgresCommitErrors', 'McpgwInboxPendingNoPodOnline'])
        expect(now.has(silent), silent).toBe(false);
    },
  );

  it(
    'calls waiting for an agent with no pod online fire McpgwInboxPendingNoPodOnline',
    { timeout: 60_000 },
    async () => {
      const pod = env.stack.processes.find((p) => p.name.startsWith('agent-pod'))!;
      await pod.stop();
      // The pod's series go stale at its first failed scrape: no pod of the agent is up.
      await expect
        .poll(
          async () => (await prometheus.query(`count(mcpgw_inbox_consumer_messages{agent="${env.agentId}"})`)).length,
          {
            timeout: 10_000,
          },
        )
        .toBe(0);
      // Calls that no pod takes: they wait in the agent's inbox (answered, or not, after the test).
      for (let i = 0; i < 3; i++) void echo(`no pod ${i}`).catch(() => undefined);
      await expect
        .poll(async () => (await firing()).has('McpgwInboxPendingNoPodOnline'), { timeout: 45_000, interval: 1_000 })
        .toBe(true);
    },
  );
});
