import { CALL_ID_META_KEY } from '@mcpgw/contracts';
import { connectMcp, freePort, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';
import type { Page } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSession, LOGIN_ROUTES } from './support/console-session';
import { startOtlpReceiver, type OtlpReceiver } from './support/otlp-receiver';

const ADMIN_PORT = await freePort();
const ORIGIN = `http://127.0.0.1:${ADMIN_PORT}`;

/**
 * The console's calls and channels pages (issue 29) in headless Chromium
 * against a real, traced stack: calls made with the official MCP SDK client,
 * found on the Calls page (filtered), opened with both their messages and the
 * time of each hop, and read again in their channel's conversation. Each page
 * is checked with axe and screenshotted (docs/console/ with UPDATE_SCREENSHOTS=1).
 */
describe('console: calls and channels', () => {
  let env: TestStack;
  let receiver: OtlpReceiver;
  let mcp: McpConnection;
  let session: ConsoleSession;
  let page: Page;
  let token: string;
  const made: Record<'echo' | 'fail' | 'count', string> = {} as never;

  const audit = (shot?: string) => session.audit(shot);
  const heading = (name: string | RegExp) => session.heading(name);
  const callIdOf = (result: { _meta?: Record<string, unknown> }) => result._meta?.[CALL_ID_META_KEY] as string;
  /** The call ids the Calls table shows, top to bottom. */
  const listedCalls = async () => page.locator('tbody th[scope="row"]').allTextContents();

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    env = await startTestStack({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
      gatewayEnv: { ADMIN_PORT: String(ADMIN_PORT) },
    });
    token = (await env.stack.admin<{ token: string }>('console', 'token', '--label', 'console-calls')).token;
    // One MCP session (one channel): a call that works, one whose tool fails, one more.
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
    made.echo = callIdOf(await mcp.client.callTool({ name: 'echo', arguments: { text: 'hello from the SDK' } }));
    made.fail = callIdOf(await mcp.client.callTool({ name: 'fail', arguments: { reason: 'on purpose' } }));
    made.count = callIdOf(await mcp.client.callTool({ name: 'counter', arguments: {} }));
    session = await ConsoleSession.open(ORIGIN);
    page = session.page;
    await session.logIn(token);
    // The overview's live stream answered before the tests leave the page (its route is checked last).
    await page.locator('[data-live="live"]').waitFor();
  });

  afterAll(async () => {
    await session?.close();
    await mcp?.close();
    await env?.stop();
    receiver?.server.close();
  });

  it('lists the calls made with the MCP SDK, newest first, and filters them by outcome, tool and caller', async () => {
    await page.getByRole('link', { name: 'Calls', exact: true }).click();
    await heading('Calls').waitFor();
    await expect.poll(listedCalls).toEqual([made.count, made.fail, made.echo]);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: made.fail, exact: true }) });
    expect(await row.getByText('tool error').count()).toBe(1);
    await audit('calls');

    await page.getByLabel('Outcome').selectOption('tool_error');
    await page.getByRole('button', { name: 'Filter calls' }).click();
    await expect.poll(listedCalls).toEqual([made.fail]);
    expect(new URL(page.url()).hash).toBe('#/calls?outcome=tool_error');

    await page.goto(`/console/#/calls?tool=echo&caller_id=apikey:${env.apiKeyId}&agent_id=${env.agentId}`);
    await expect.poll(listedCalls).toEqual([made.echo]);
    expect(await page.getByLabel('Tool').inputValue()).toBe('echo');
    // A filter the API refuses is said as the API says it, not a blank page.
    await page.goto('/console/#/calls?outcome=maybe');
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/outcome must be one of/);
  });

  it('opens a call: both messages with their envelopes, the time of each hop, the trace id', async () => {
    await page.goto('/console/#/calls');
    await page.getByRole('link', { name: made.echo, exact: true }).click();
    await heading(`Call ${made.echo}`).waitFor();
    const of = `call ${made.echo}`;
    const chat = JSON.parse((await page.getByLabel(`chat_message envelope of ${of}`).textContent())!);
    const reply = JSON.parse((await page.getByLabel(`agent_reply envelope of ${of}`).textContent())!);
    expect(chat).toMatchObject({ type: 'chat_message', call_id: made.echo, tool_call: { name: 'echo' } });
    expect(reply).toMatchObject({
      type: 'agent_reply',
      in_reply_to: chat.id,
      content: [{ text: 'hello from the SDK' }],
    });
    const hops = await page
      .locator('table.hops td[data-hop-ms]')
      .evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-hop-ms')));
    expect(hops).toHaveLength(4);
    for (const ms of hops) expect(ms).toMatch(/^-?\d+$/);
    const spanOf = () => receiver.spans.find((s) => s.attributes['mcpgw.call_id'] === made.echo && !s.parentSpanId);
    await expect.poll(spanOf, { timeout: 15_000 }).toBeDefined();
    expect(await page.locator('code.trace').textContent()).toBe(spanOf()!.traceId);
    await audit('call');
  });

  it("opens the call's channel: the conversation, each chat_message and agent_reply, their hops, links to the calls", async () => {
    await page.goto(`/console/#/calls/${made.echo}`);
    await heading(`Call ${made.echo}`).waitFor();
    await page.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).click();
    await heading(/^Channel [0-9a-f-]{36}$/).waitFor();
    const turns = page.locator('article.turn');
    await expect.poll(() => turns.count()).toBe(3);
    // Oldest first, each turn linking to its call.
    expect(await turns.locator('h2').allTextContents()).toEqual([
      'Tool call echo',
      'Tool call fail',
      'Tool call counter',
    ]);
    const first = turns.first();
    expect(await first.getByRole('link', { name: made.echo, exact: true }).count()).toBe(1);
    for (const type of ['chat_message', 'agent_reply']) {
      await first.getByText(`Envelope of the ${type} of call ${made.echo}`).click();
      const envelope = JSON.parse((await first.getByLabel(`${type} envelope of call ${made.echo}`).textContent())!);
      expect(envelope.type).toBe(type);
    }
    expect(await first.locator('td[data-hop-ms]').count()).toBe(4);
    await audit('channel');
    const channelId = (await heading(/^Channel /).textContent())!.replace('Channel ', '');

    await page.getByRole('link', { name: 'All channels' }).click();
    await heading('Channels').waitFor();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: channelId }) });
    await row.waitFor();
    expect(await row.getByRole('cell').allTextContents()).toContain('6');
    await audit('channels');
  });

  it('lists a REST invoke call with the MCP ones, under the call id the REST answer gave', async () => {
    const response = await fetch(`${env.gatewayUrls[0]}/api/v1/agents/${env.agentId}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-agent-api-key': env.apiKey },
      body: JSON.stringify({ tool: 'echo', arguments: { text: 'hello over REST' } }),
    });
    expect(response.status).toBe(200);
    const { call_id: restCall } = (await response.json()) as { call_id: string };
    await page.goto('/console/#/calls');
    await heading('Calls').waitFor();
    await expect.poll(listedCalls).toEqual([restCall, made.count, made.fail, made.echo]);
    await page.getByRole('link', { name: restCall, exact: true }).click();
    await heading(`Call ${restCall}`).waitFor();
    await audit();
  });

  it('used only routes of docs/admin-openapi.yaml, and every answer was valid by its schema', async () => {
    await session.expectDocumentedAnswers([
      ...LOGIN_ROUTES,
      'GET /admin/v1/calls',
      'GET /admin/v1/calls/{callId}',
      'GET /admin/v1/channels',
      'GET /admin/v1/channels/{channelId}/messages',
    ]);
  });
});
