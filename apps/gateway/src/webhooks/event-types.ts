/**
 * Every webhook event type, and whether the gateway emits it yet. A webhook
 * subscribes to any of them; registration refuses names not listed here. The
 * task events are reserved for the protocol work (tasks): registering for
 * them is allowed now, so a receiver can be set up before they are emitted.
 */
export const WEBHOOK_EVENT_TYPES = {
  'tool_call.completed': { emitted: true, description: 'a tools/call ended with a result (isError false)' },
  'tool_call.failed': {
    emitted: true,
    description: 'a tools/call ended with a tool error (isError true), an agent timeout or a backend failure',
  },
  'task.completed': { emitted: false, description: 'reserved: a task finished' },
  'task.failed': { emitted: false, description: 'reserved: a task failed' },
  'task.cancelled': { emitted: false, description: 'reserved: a task was cancelled' },
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
