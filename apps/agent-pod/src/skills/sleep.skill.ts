import { setTimeout as delay } from 'node:timers/promises';
import { text, type Skill } from './skill';

/** Waits `ms` milliseconds, then answers. For timeout, redelivery and cancellation tests. */
export const sleepSkill: Skill = {
  definition: {
    name: 'sleep',
    title: 'Sleep',
    description: 'Waits for the given number of milliseconds, then answers.',
    input_schema: {
      type: 'object',
      properties: { ms: { type: 'integer', minimum: 0, maximum: 600000 } },
      required: ['ms'],
      additionalProperties: false,
    },
    side_effect_class: 'read',
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  async run(args, ctx) {
    const ms = Number(args.ms);
    await delay(ms, undefined, { signal: ctx.signal });
    return { content: [text(`slept ${ms} ms`)], structured: { slept_ms: ms, pod_id: ctx.podId } };
  },
};
