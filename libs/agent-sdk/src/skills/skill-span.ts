import type { ChatMessage } from '@mcpgw/contracts';
import { SpanStatusCode, trace } from '@opentelemetry/api';

const tracer = trace.getTracer('@mcpgw/agent-sdk');

/**
 * Run a skill in a span `skill <name>`, a child of the call's (the inbox
 * message carries its trace context), when the host traces: with no
 * OpenTelemetry SDK registered, or no recording span around, it runs plainly.
 * `failed()` marks the span as a tool error.
 */
export async function inSkillSpan<T>(
  skill: string,
  message: Pick<ChatMessage, 'id' | 'call_id'>,
  podId: string,
  work: (failed: () => void) => Promise<T>,
): Promise<T> {
  if (!trace.getActiveSpan()?.isRecording()) return work(() => undefined);
  const attributes = {
    'mcpgw.skill': skill,
    'mcpgw.message_id': message.id,
    ...(message.call_id && { 'mcpgw.call_id': message.call_id }),
    'mcpgw.pod_id': podId,
  };
  return tracer.startActiveSpan(`skill ${skill}`, { attributes }, async (span) => {
    try {
      return await work(() => span.setAttribute('mcpgw.is_error', true));
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message ?? String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}
