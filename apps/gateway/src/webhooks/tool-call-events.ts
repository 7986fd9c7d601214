import type { ContentItem } from '@mcpgw/contracts';
import type { CallError } from '../calls/call-errors';
import type { WebhookEvent } from './event-types';
import type { CallSurface } from '../calls/call-shapes';

/** Longest text of a result or error a webhook carries (the rest is cut, and `truncated` says so). */
const SUMMARY_CHARS = 1_000;

/** What every tool_call event says about the call. Never its arguments, meta or credentials. */
export interface ToolCallFacts {
  /** The call's id (`@mcpgw/contracts` call-id.ts); undefined when the call never reached the bus. */
  callId: string | undefined;
  agentId: string;
  callerId: string;
  tool: string;
  surface: CallSurface;
  durationMs: number;
}

/** The events an outcome can be (`outcomeEvent`). */
export const OUTCOME_EVENTS = ['tool_call.completed', 'tool_call.failed'] as const;

/** The call ended with a result: `tool_call.completed`, or `tool_call.failed` for a tool error (isError). */
export function outcomeEvent(
  facts: ToolCallFacts,
  outcome: { content: ContentItem[]; isError: boolean },
): WebhookEvent {
  const summary = summarize(outcome.content);
  return outcome.isError
    ? event('tool_call.failed', facts, { error: { kind: 'tool_error', ...summary } })
    : event('tool_call.completed', facts, { result: summary });
}

/** The call ended with a typed error after it reached the agent (timeout, backend failure). */
export function errorEvent(facts: ToolCallFacts, error: CallError): WebhookEvent {
  return event('tool_call.failed', facts, { error: { kind: error.kind, message: cut(error.message).text } });
}

/** Errors that report a call: it was sent, and the caller did not withdraw it. */
export const REPORTED_ERRORS = new Set(['agent_timeout', 'backend_unavailable', 'internal', 'conversation_gone']);

function event(type: WebhookEvent['type'], facts: ToolCallFacts, outcome: Record<string, unknown>): WebhookEvent {
  return {
    type,
    timestamp: new Date().toISOString(),
    data: {
      call_id: facts.callId ?? null,
      tool: facts.tool,
      agent_id: facts.agentId,
      caller_id: facts.callerId,
      surface: facts.surface,
      duration_ms: facts.durationMs,
      ...outcome,
    },
  };
}

/** The content's text items, cut to SUMMARY_CHARS, and the types of all its items. */
function summarize(content: ContentItem[]): { text: string; truncated: boolean; content_types: string[] } {
  const text = content
    .filter((item): item is ContentItem & { type: 'text'; text: string } => item.type === 'text')
    .map((item) => item.text)
    .join('\n');
  return { ...cut(text), content_types: content.map((item) => item.type) };
}

function cut(text: string): { text: string; truncated: boolean } {
  return text.length > SUMMARY_CHARS
    ? { text: text.slice(0, SUMMARY_CHARS), truncated: true }
    : { text, truncated: false };
}
