import type { SchemaObject } from 'ajv';
import { describeErrors, lazyValidator } from '../envelopes/schemas';
import { defineSubject, type PayloadCheck } from './define';
import { POD_ID_PATTERN } from './subjects';

/*
 * Pod presence: each pod of an agent says it is up every few seconds, and that
 * it is leaving when it drains. The gateway keeps, per pod, when it was last
 * heard (apps/gateway/src/agents/README.md, "Pods and presence").
 */

/** How often a pod says it is up, unless told otherwise (`PRESENCE_INTERVAL_MS` in both SDKs). */
export const PRESENCE_INTERVAL_MS = 15_000;
/** The bounds of a pod's `interval_ms`: a pod cannot claim to stay online for longer than 3 × the maximum. */
export const PRESENCE_INTERVAL_MIN_MS = 100;
export const PRESENCE_INTERVAL_MAX_MS = 600_000;

/** `AgentPresence`: one pod is up (and says again within `interval_ms`), or is leaving now. */
export interface PresenceEvent {
  pod_id: string;
  state: 'up' | 'leaving';
  interval_ms: number;
}

const presenceSchema: SchemaObject = {
  type: 'object',
  required: ['pod_id', 'state', 'interval_ms'],
  properties: {
    pod_id: { type: 'string', pattern: POD_ID_PATTERN.source },
    state: { enum: ['up', 'leaving'] },
    interval_ms: { type: 'integer', minimum: PRESENCE_INTERVAL_MIN_MS, maximum: PRESENCE_INTERVAL_MAX_MS },
  },
};

const validate = lazyValidator(presenceSchema);

export const checkPresence: PayloadCheck<PresenceEvent> = (plain) =>
  validate(plain)
    ? { ok: true, value: plain as PresenceEvent }
    : { ok: false, errors: describeErrors(validate.errors) };

/**
 * Heartbeats of an agent's pods (agent -> gateway). The agent's id is in the
 * subject: only its credentials may publish there, and the gateway takes the
 * agent from the subject, never from the payload. Heard by one gateway replica
 * of the queue group, which records it.
 */
export const AgentPresence = defineSubject({
  family: 'agents.*.presence',
  subject: (prefix: string, agentId: string) => `${prefix}.agents.${agentId}.presence`,
  check: checkPresence,
});

/** The schema of `checkPresence`, for documents derived from the contract. A deep copy. */
export function presenceSchemas(): Record<string, SchemaObject> {
  return { PresenceEvent: structuredClone(presenceSchema) };
}
