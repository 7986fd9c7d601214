import {
  connectMcp,
  counterDelta,
  scrapeAll,
  startTestStack,
  type McpConnection,
  type TestStack,
} from '@mcpgw/devstack';
import { CALL_ID_META_KEY } from '@mcpgw/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver';
import { CALL_BUDGET, callTraffic } from './support/call-budget';

/**
 * Traces (libs/observability/src/tracing/README.md): every app exports to a
 * tiny OTLP/HTTP receiver run here, and one tools/call must come back as one
 * trace with spans from all three apps, chained gateway → message service →
 * agent pod. An app started without OTEL_EXPORTER_OTLP_ENDPOINT sends nothing.
 */

/**
 * Every span one traced tools/call makes, by app. Each app exports on its own
 * schedule, so a call's spans arrive in no fixed order: a test waits for all of
 * them (the message service's `post_and_wait` span, for one, ends after its
 * receipt of the reply and may come in a later export).
 */
const CALL_SPANS = {
  gateway: ['send ms.messages.post_and_wait', 'tools/call echo'],
  'message-service': ['process ms.messages.post_and_wait', 'process ms.replicas.*.replies.*', 'publish agents.*.inbox'],
  'agent-pod': ['process agents.*.inbox', 'send ms.replicas.*.replies.*', 'skill echo'],
};
const EVERY_CALL_SPAN = Object.values(CALL_SPANS).flat();

/** The spans from `span` up to the root, each with its parent. */
function ancestry(span: ReceivedSpan, all: ReceivedSpan[]): ReceivedSpan[] {
  const byId = new Map(all.map((s) => [s.spanId, s]));
  const chain = [span];
  for (let at = span; at.parentSpanId;) {
    const parent = byId.get(at.parentSpanId);
    if (!parent) throw new Error(`span ${at.name} (${at.service}) has a parent that was not received`);
    chain.push((at = parent));
  }
  return chain;
}

describe('traces across the three apps', () => {
  let receiver: OtlpReceiver;
  let env: TestStack;
  let mcp: McpConnection;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    // Every app (the stack's `env` reaches all of them), exporting every 100 ms instead of every 5 s.
    env = await startTestStack({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
    });
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
  });

  afterAll(async () => {
    await mcp?.close();
    await env?.stop();
    receiver?.server.close();
  });

  it('makes one tools/call one trace, with spans from the gateway, the message service and the pod', async () => {
    const result = await mcp.client.callTool({ name: 'echo', arguments: { text: 'traced' } });
    expect(result.isError).toBeFalsy();

    const complete = () => EVERY_CALL_SPAN.every((name) => receiver.spans.some((s) => s.name === name));
    await expect.poll(complete, { timeout: 15_000, interval: 100 }).toBe(true);
    const spans = [...receiver.spans];

    // Nothing else was traced (start-up, registration and tools/list are not): one call, one trace.
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['gateway', 'message-service', 'agent-pod']));

    const root = spans.find((s) => s.name === 'tools/call echo')!;
    expect(root).toMatchObject({
      service: 'gateway',
      parentSpanId: undefined,
      kind: 2, // SERVER
      attributes: {
        'mcpgw.agent': env.agentId,
        'mcpgw.tool': 'echo',
        'mcpgw.surface': 'agent',
        'mcpgw.outcome': 'ok',
        // The call id the client got in the result's _meta (issue 28).
        'mcpgw.call_id': result._meta?.[CALL_ID_META_KEY],
      },
    });
    expect(spans.filter((s) => !s.parentSpanId)).toEqual([root]);

    // Each app's spans: the gateway's request, the service's handling and inbox publish, the pod's work and reply.
    const named = (service: string) =>
      spans
        .filter((s) => s.service === service)
        .map((s) => s.name)
        .sort();
    for (const [service, names] of Object.entries(CALL_SPANS)) expect(named(service)).toEqual(names);

    // The skill descends from the message service's inbox publish, which descends from the gateway's request.
    const skill = spans.find((s) => s.name === 'skill echo')!;
    expect(skill.attributes).toMatchObject({
      'mcpgw.skill': 'echo',
      'mcpgw.call_id': root.attributes['mcpgw.call_id'],
    });
    expect(ancestry(skill, spans).map((s) => `${s.service}: ${s.name}`)).toEqual([
      'agent-pod: skill echo',
      'agent-pod: process agents.*.inbox',
      'message-service: publish agents.*.inbox',
      'message-service: process ms.messages.post_and_wait',
      'gateway: send ms.messages.post_and_wait',
      'gateway: tools/call echo',
    ]);
    // The reply goes back in the same trace: the service's receipt descends from the pod's reply.
    const receipt = spans.find((s) => s.name === 'process ms.replicas.*.replies.*')!;
    expect(ancestry(receipt, spans).map((s) => s.service)).toEqual([
      'message-service',
      'agent-pod',
      'agent-pod',
      'message-service',
      'message-service',
      'gateway',
      'gateway',
    ]);
    const inbox = spans.find((s) => s.name === 'publish agents.*.inbox')!;
    expect(inbox.attributes).toMatchObject({
      'messaging.system': 'nats',
      'messaging.destination.name': 'agents.*.inbox',
    });
  });

  it('adds headers, not messages: a traced call costs the bus what an untraced one does', async () => {
    // The budget of call-budget.e2e.spec.ts (run there with tracing off).
    const urls = env.stack.processes.map((p) => p.managementUrl!);
    const before = await scrapeAll(urls);
    for (let i = 0; i < 10; i++) await mcp.client.callTool({ name: 'echo', arguments: { text: `count ${i}` } });
    const spent = counterDelta(before, await scrapeAll(urls));
    expect(callTraffic(spent, 'out')).toBeLessThanOrEqual(CALL_BUDGET.published * 10 + 4);
    expect(callTraffic(spent, 'in')).toBeLessThanOrEqual(CALL_BUDGET.delivered * 10 + 4);
    // Every span of the eleven calls so far arrives (before the next test counts from here).
    const count = (name: string) => receiver.spans.filter((s) => s.name === name).length;
    await expect
      .poll(() => EVERY_CALL_SPAN.map(count), { timeout: 15_000, interval: 100 })
      .toEqual(EVERY_CALL_SPAN.map(() => 11));
  });

  it('traces a REST invoke the same way, its server span labelled surface="rest"', async () => {
    const response = await fetch(`${env.gatewayUrls[0]}/api/v1/agents/${env.agentId}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-agent-api-key': env.apiKey },
      body: JSON.stringify({ tool: 'echo', arguments: { text: 'traced over REST' } }),
    });
    expect(response.status).toBe(200);
    const { call_id: callId } = (await response.json()) as { call_id: string };

    const byCall = () => receiver.spans.find((s) => s.attributes['mcpgw.call_id'] === callId && !s.parentSpanId);
    await expect.poll(byCall, { timeout: 15_000, interval: 100 }).toBeDefined();
    const root = byCall()!;
    expect(root).toMatchObject({
      service: 'gateway',
      name: 'tools/call echo',
      kind: 2, // SERVER
      attributes: { 'mcpgw.agent': env.agentId, 'mcpgw.tool': 'echo', 'mcpgw.surface': 'rest', 'mcpgw.outcome': 'ok' },
    });
    // One trace down to the pod's skill, as for MCP; complete (every span in) before the next test counts.
    const traced = (name: string) => receiver.spans.find((s) => s.name === name && s.traceId === root.traceId);
    await expect.poll(() => EVERY_CALL_SPAN.every(traced), { timeout: 15_000, interval: 100 }).toBe(true);
    expect(ancestry(traced('skill echo')!, [...receiver.spans]).at(-1)).toBe(root);
  });

  it('sends nothing from an app started without OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    // A second pod without the variable; the first one stops (and flushes), so the untraced pod runs the calls.
    const untraced = await env.stack.startPod({ POD_ID: 'pod-untraced', OTEL_EXPORTER_OTLP_ENDPOINT: '' });
    await env.stack.processes.find((p) => p.name === 'agent-pod-1')!.stop();
    const before = receiver.spans.length;

    for (let i = 0; i < 3; i++) {
      const result = await mcp.client.callTool({ name: 'echo', arguments: { text: `untraced ${i}` } });
      expect(result.content).toEqual([{ type: 'text', text: `untraced ${i}` }]);
    }
    // The traced apps still report the calls (three traces); give the exports a moment more before looking.
    const handled = () => receiver.spans.slice(before).filter((s) => s.name === 'process ms.messages.post_and_wait');
    await expect.poll(() => handled().length, { timeout: 15_000, interval: 100 }).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 500));

    const later = receiver.spans.slice(before);
    expect(new Set(later.map((s) => s.traceId)).size).toBe(3);
    // The untraced pod got the trace headers and answered, but made no span and sent nothing: its
    // reply carries no context, so the chain ends at the inbox publish.
    expect(later.filter((s) => s.service === 'agent-pod')).toEqual([]);
    expect(later.filter((s) => s.name === 'process ms.replicas.*.replies.*')).toEqual([]);
    expect(receiver.senders.has(untraced.name)).toBe(false);
    expect(receiver.senders.has('agent-pod-1')).toBe(true);
  });
});
