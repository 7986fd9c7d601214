import { Inject, Injectable } from '@nestjs/common';
import type { CallEvent } from '@mcpgw/contracts';
import { AgentsStore } from '../../agents/agents.store';
import { CallCancelledError } from '../../calls/call-errors';
import { CallRunner } from '../../calls/call-runner.service';
import type { CallOutcome } from '../../calls/call-shapes';
import { ToolCatalogueService } from '../../catalogue/tool-catalogue.service';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import { withoutAttachments } from '../../files/attachments';
import { CallTime } from '../../timeouts/call-time';
import { AdminApiError } from '../admin-api-errors';

/** What a playground call tells as it goes (the SSE events of `POST …/playground/calls`). */
export interface PlaygroundSink {
  started(ids: { call_id: string; message_id: string }): void;
  event(name: 'progress' | 'log' | 'notice', data: Record<string, unknown>): void;
  /** The result, as JSON text ({call_id, channel_id, is_error, content, structured_content?}). */
  result(json: string): void;
  error(data: { call_id: string | null; code: string; message: string }): void;
}

/** The caller id of an operator's playground calls: its admin token's id, never the token. */
export const playgroundCaller = (tokenId: string): string => `admin:${tokenId}`;

/**
 * The console's playground (README.md here): an operator calls a tool of an
 * agent through the same CallRunner the MCP surfaces use (catalogue, argument
 * validation, the bus, metrics, traces, webhooks, call ids), as caller
 * `admin:<token id>`, on surface `admin`.
 */
@Injectable()
export class PlaygroundService {
  constructor(
    private readonly agents: AgentsStore,
    private readonly catalogue: ToolCatalogueService,
    private readonly runner: CallRunner,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  /**
   * Refuse before any stream opens, so the refusal keeps its status: no such
   * agent or tool (404), arguments the tool's input schema refuses (400, the
   * catalogue's compiled validator, as a call would be refused).
   */
  async check(agentId: string, tool: string, args: Record<string, unknown>): Promise<void> {
    if (!(await this.agents.find(agentId))) throw new AdminApiError(404, 'not_found', `no agent ${agentId}`);
    const found = (await this.catalogue.forAgent(agentId)).byName.get(tool);
    if (!found) throw new AdminApiError(404, 'not_found', `agent ${agentId} has no tool ${tool}`);
    const problems = found.validate(withoutAttachments(structuredClone(args), found.definition));
    if (problems.length) {
      throw new AdminApiError(400, 'invalid_request', `invalid arguments for ${tool}: ${problems.join('; ')}`);
    }
  }

  /** Run the call; what happens is told to `sink`. Aborting `signal` cancels it (the agent is told to stop). */
  async run(
    call: { agentId: string; tokenId: string; tool: string; arguments: Record<string, unknown>; requestId: string },
    sink: PlaygroundSink,
    signal: AbortSignal,
  ): Promise<void> {
    let callId: string | null = null;
    const ran = await this.runner.run(
      'admin',
      {
        agentId: call.agentId,
        callerId: playgroundCaller(call.tokenId),
        tool: call.tool,
        arguments: call.arguments,
        time: CallTime.accept(undefined, this.env),
        requestId: call.requestId,
      },
      undefined,
      shapeResult,
      {
        signal,
        onMessage: (ids) => {
          callId = ids.callId;
          sink.started({ call_id: ids.callId, message_id: ids.messageId });
        },
        onEvent: (event) => relay(event, sink),
      },
    );
    if (ran.ok) return sink.result(ran.resultText);
    if (ran.error instanceof CallCancelledError) return;
    sink.error({ call_id: callId, code: ran.error.kind, message: ran.error.message });
  }
}

function shapeResult(outcome: CallOutcome): object {
  return {
    call_id: outcome.callId,
    channel_id: outcome.channelId,
    is_error: outcome.isError,
    content: outcome.content,
    ...(outcome.structuredContent ? { structured_content: outcome.structuredContent } : {}),
  };
}

/** The agent's events as the playground shows them; it answers no question (input requests are only told). */
function relay(event: CallEvent, sink: PlaygroundSink): void {
  if (event.type === 'progress') {
    const { progress, total, message } = event;
    sink.event('progress', { progress, ...(total !== undefined && { total }), ...(message && { message }) });
  } else if (event.type === 'log') {
    sink.event('log', { level: event.level, ...(event.logger && { logger: event.logger }), data: event.data });
  } else {
    sink.event('notice', { type: event.type });
  }
}
