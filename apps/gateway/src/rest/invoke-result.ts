import type { ContentItem } from '@mcpgw/contracts';
import type { CallOutcome } from '../calls/call-shapes';

/**
 * The 200 answer of an invoke: the agent's reply, named by its call. `output` is
 * the structured result, or `{text}` (the text items, joined) when the agent
 * answered in text only; `content` is the MCP content array, intact.
 */
export function toInvokeResult(outcome: CallOutcome, tool: string) {
  return {
    call_id: outcome.callId,
    tool,
    output: outputOf(outcome.structuredContent, outcome.content),
    content: outcome.content,
    is_error: outcome.isError,
    created_at: outcome.reply.created_at,
  };
}

export type InvokeResult = ReturnType<typeof toInvokeResult>;

/** The structured result, or the text of a text-only answer. */
export function outputOf(
  structured: Record<string, unknown> | undefined,
  content: Pick<ContentItem, 'type'>[],
): Record<string, unknown> {
  if (structured) return structured;
  const texts = content.flatMap((item) => ('text' in item && item.type === 'text' ? [String(item.text)] : []));
  return { text: texts.join('\n') };
}
