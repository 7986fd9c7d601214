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
    output: outcome.structuredContent ?? { text: textOf(outcome) },
    content: outcome.content,
    is_error: outcome.isError,
    created_at: outcome.reply.created_at,
  };
}

export type InvokeResult = ReturnType<typeof toInvokeResult>;

function textOf(outcome: CallOutcome): string {
  return outcome.content.flatMap((item) => (item.type === 'text' ? [item.text] : [])).join('\n');
}
