import { setTimeout as delay } from 'node:timers/promises';
import { text, type Skill } from './skill';

/**
 * Waits `ms` milliseconds, then answers; with `progress_every_ms`, reports
 * progress (elapsed of total) that often while it waits. For timeout,
 * redelivery, progress and cancellation tests.
 */
export const sleepSkill: Skill = {
  definition: {
    name: 'sleep',
    title: 'Sleep',
    description: 'Waits for the given number of milliseconds, then answers; can report progress while it waits.',
    input_schema: {
      type: 'object',
      properties: {
        ms: { type: 'integer', minimum: 0, maximum: 600000 },
        progress_every_ms: { type: 'integer', minimum: 10, maximum: 60000 },
      },
      required: ['ms'],
      additionalProperties: false,
    },
    side_effect_class: 'read',
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  async run(args, ctx) {
    const ms = Number(args.ms);
    const every = args.progress_every_ms === undefined ? ms : Number(args.progress_every_ms);
    const started = Date.now();
    for (let elapsed = 0; elapsed < ms; elapsed = Date.now() - started) {
      await delay(Math.min(every, ms - elapsed), undefined, { signal: ctx.signal });
      if (args.progress_every_ms !== undefined) {
        const done = Math.min(Date.now() - started, ms);
        ctx.progress(done, ms, `slept ${done} of ${ms} ms`);
        ctx.log('info', { slept_ms: done, of_ms: ms }, 'sleep');
      }
    }
    return { content: [text(`slept ${ms} ms`)], structured: { slept_ms: ms, pod_id: ctx.podId } };
  },
};
