/**
 * The management API's calls and channels as the console reads them
 * (docs/admin-openapi.yaml: CallPage, CallFound, ChannelPage, Conversation).
 */
export const CALL_OUTCOMES = ['ok', 'tool_error', 'failed', 'no_reply'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

export interface Timings {
  posted_at: string;
  stored_at: string;
  replied_at: string | null;
  reply_stored_at: string | null;
  hops_ms: {
    gateway_to_message_service: number | null;
    message_service_to_agent_reply: number | null;
    agent_reply_to_stored: number | null;
  };
  total_ms: number | null;
}
export interface StoredEnvelope {
  seq: number;
  sender: string | null;
  stored_at: string;
  envelope: { type: 'chat_message' | 'agent_reply'; id: string } & Record<string, unknown>;
}
export interface CallSummary {
  call_id: string;
  agent_id: string;
  tool: string;
  caller_id: string;
  channel_id: string;
  message_id: string;
  outcome: CallOutcome;
  started_at: string;
  duration_ms: number | null;
  trace_id: string | null;
}
export interface CallPage {
  items: CallSummary[];
  next_before: string | null;
}
export interface CallDetail extends CallSummary {
  outcome_detail: string | null;
  pod_id: string | null;
  timings: Timings;
  idempotency: {
    key: string;
    created_at: string;
    completed_at: string | null;
    expires_at: string;
    replays_stored_result: boolean;
  } | null;
  message: StoredEnvelope;
  reply: StoredEnvelope | null;
}
export interface CallFound {
  call_id: string;
  calls: CallDetail[];
}
export interface Channel {
  id: string;
  agent_id: string;
  created_at: string;
  messages: number;
  last_message_at: string | null;
  caller_id: string | null;
}
export interface ChannelPage {
  items: Channel[];
  next_before: string | null;
}
export interface Turn {
  kind: 'tool_call' | 'resource_read' | 'prompt_get' | 'complete' | 'message';
  name: string | null;
  call_id: string | null;
  caller_id: string;
  outcome: CallOutcome;
  outcome_detail: string | null;
  pod_id: string | null;
  trace_id: string | null;
  timings: Timings;
  message: StoredEnvelope;
  reply: StoredEnvelope | null;
}
export interface Conversation {
  channel: Channel;
  items: Turn[];
  next_before: string | null;
}

/** `?a=1&b=2` of the fields that have a value (the API refuses an empty one), or ''. */
export function queryOf(fields: Record<string, string | undefined>): string {
  const given = Object.entries(fields).filter((entry): entry is [string, string] => !!entry[1]);
  return given.length ? `?${new URLSearchParams(given).toString()}` : '';
}
