import { CALL_ID_META_KEY, LOG_LEVELS, type CallEvent, type LogLevel } from '@mcpgw/contracts';
import type { CallOutcome } from '../../calls/call-shapes';
import type { CatalogueTool } from '../../catalogue/tool-catalogue.service';

/** A registered skill as an MCP tool: every field the revision defines, when set. */
export function toMcpTool({ definition: d }: CatalogueTool) {
  return {
    name: d.name,
    ...(d.title ? { title: d.title } : {}),
    description: d.description,
    inputSchema: d.input_schema,
    ...(d.output_schema ? { outputSchema: d.output_schema } : {}),
    ...(d.annotations ? { annotations: d.annotations } : {}),
    ...(d.execution?.taskSupport ? { execution: { taskSupport: d.execution.taskSupport } } : {}),
    ...(d._meta ? { _meta: d._meta } : {}),
  };
}

/**
 * The agent's reply as an MCP CallToolResult; content passes through intact.
 * `_meta` names the call (`mcpgw/callId`), with whatever else the surface adds.
 */
export function toCallResult(outcome: CallOutcome, meta: Record<string, unknown> = {}) {
  return {
    content: outcome.content,
    ...(outcome.structuredContent ? { structuredContent: outcome.structuredContent } : {}),
    ...(outcome.isError ? { isError: true } : {}),
    _meta: { [CALL_ID_META_KEY]: outcome.callId, ...meta },
  };
}

/**
 * Turns the agent's events into MCP notifications for one request: progress
 * only with a progressToken and only when it grows (MCP requires it to
 * increase); log lines at or above the session's level.
 */
export function eventRelay(
  progressToken: string | number | undefined,
  /** `null`: no log lines at all (2026-07-28 without a logLevel in `_meta`). */
  minLevel: LogLevel | undefined | null,
  notify: (notification: object) => void,
  /** The id to relay an agent's question to the client under; absent: the client takes no requests here. */
  requestId?: (messageId: string, key: string) => string,
  /** Close the client's connection, not the stream (the agent's `poll`); absent: the stream cannot resume. */
  release?: () => void,
): (event: CallEvent) => void {
  let last = Number.NEGATIVE_INFINITY;
  const threshold = minLevel === null ? Number.POSITIVE_INFINITY : LOG_LEVELS.indexOf(minLevel ?? 'debug');
  return (event) => {
    if (event.type === 'progress') {
      if (progressToken === undefined || !(event.progress > last)) return;
      last = event.progress;
      const { progress, total, message } = event;
      notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress, total, message } });
      return;
    }
    if (event.type === 'poll') {
      release?.();
      return;
    }
    if (event.type === 'input_request') {
      // The id tells whichever replica gets the client's answer where to publish it.
      if (requestId)
        notify({
          jsonrpc: '2.0',
          id: requestId(event.in_reply_to, event.key),
          method: event.method,
          params: event.params,
        });
      return;
    }
    if (LOG_LEVELS.indexOf(event.level) < threshold) return;
    const { level, logger, data } = event;
    notify({ jsonrpc: '2.0', method: 'notifications/message', params: { level, logger, data } });
  };
}
