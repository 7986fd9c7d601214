import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CallRunner } from '../../calls/call-runner.service';
import type { BusClient } from '@mcpgw/bus';
import { CallCancellation } from '../../cancellation/call-cancellation.service';
import { InFlightCalls } from '../../cancellation/in-flight-calls.service';
import type { ToolCatalogueService } from '../../catalogue/tool-catalogue.service';
import type { GatewayEnv } from '../../config/gateway.env';
import type { ConversationHandles } from '../../sessions/conversation-handles';
import type { SessionsService } from '../../sessions/sessions.service';
import { AgentTools } from './agent-tools';
import type { InputRequired } from '../input-required/input-required.service';
import type { InputRequestIds } from './input-request-ids';
import type { LegacyTasks } from '../../tasks/legacy-tasks.service';
import type { TaskService } from '../../tasks/tasks.service';

const STORED = '{"content":[{"type":"text","text":"stored once"}],"structuredContent":{"count":1}}';

/** AgentTools over a CallRunner that answers from an idempotency record. */
function toolsReplaying(resultText: string) {
  const calls = { run: vi.fn(async () => ({ ok: true as const, resultText, replayed: true })) };
  const env = { CALL_TIMEOUT_MS: 1_000, CALL_TIMEOUT_MAX_MS: 2_000, MCP_PAGE_SIZE: 10 } as GatewayEnv;
  return new AgentTools(
    { forAgent: async () => ({ byName: new Map() }) } as unknown as ToolCatalogueService,
    calls as unknown as CallRunner,
    new CallCancellation(new InFlightCalls(), {} as BusClient),
    {} as ConversationHandles,
    {} as InputRequestIds,
    {} as SessionsService,
    {} as InputRequired,
    {} as TaskService,
    {} as LegacyTasks,
    env,
  );
}

describe('AgentTools.call, replayed', () => {
  afterEach(() => vi.restoreAllMocks());

  it('answers with the stored result text, marked, without parsing it or writing it again', async () => {
    const tools = toolsReplaying(STORED);
    const parse = vi.spyOn(JSON, 'parse');
    const stringify = vi.spyOn(JSON, 'stringify');
    const handled = await tools.call(
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'counter', arguments: { idempotency_key: 'k' } } },
      { agentId: 'demo-agent', requestId: 'req-1', principal: { id: 'key-1' } as never },
    );
    expect(parse).not.toHaveBeenCalled();
    expect(stringify.mock.calls.every(([value]) => typeof value !== 'object' || value === null)).toBe(true);
    expect(handled.headers).toEqual({ 'idempotent-replayed': 'true' });
    expect(handled.response).toBe(
      '{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"stored once"}],"structuredContent":{"count":1},"_meta":{"mcpgw/idempotentReplay":true}}}',
    );
  });
});
