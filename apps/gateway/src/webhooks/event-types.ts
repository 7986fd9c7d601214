/**
 * Every webhook event type, and whether the gateway emits it yet. A webhook
 * subscribes to any of them; registration refuses names not listed here. The
 * task events come from tasks (io.modelcontextprotocol/tasks, ../tasks/).
 */
export const WEBHOOK_EVENT_TYPES = {
  'tool_call.completed': { emitted: true, description: 'a tools/call ended with a result (isError false)' },
  'tool_call.failed': {
    emitted: true,
    description: 'a tools/call ended with a tool error (isError true), an agent timeout or a backend failure',
  },
  'task.completed': { emitted: true, description: 'a task ended with a result (a tool error too: data.is_error)' },
  'task.failed': { emitted: true, description: 'a task ended with a protocol error, or the agent ran out of time' },
  'task.cancelled': { emitted: true, description: 'a task was cancelled by its client' },
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENT_TYPES;

export function isWebhookEventType(name: string): name is WebhookEventType {
  return Object.hasOwn(WEBHOOK_EVENT_TYPES, name);
}

/** The body of a delivery (Standard Webhooks): what happened, when, and its data. */
export interface WebhookEvent<T extends WebhookEventType = WebhookEventType> {
  type: T;
  /** ISO 8601, when it happened. */
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * The type of an A2A push event (`../a2a/push/`): heard only by the push configs of its task, never
 * registrable as a webhook's event (not in the registry); its body is the A2A `StreamResponse`.
 */
export const A2A_PUSH_EVENT_TYPE = 'a2a.task';

/** The same for the push configs a client made over A2A 0.3: the body is the Task in 0.3's shape (0.3's push body). */
export const A2A_PUSH_V03_EVENT_TYPE = 'a2a.task.v0.3';

export type A2aPushEventType = typeof A2A_PUSH_EVENT_TYPE | typeof A2A_PUSH_V03_EVENT_TYPE;
