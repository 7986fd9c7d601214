import { setTimeout as delay } from 'node:timers/promises';
import { text, type Skill } from './skill';

const executions = new Map<string, number>();

/**
 * Counts how many times this pod really executed it, per `key`. Idempotent
 * replays served by the gateway never reach here, so the count proves them.
 */
export const counterSkill: Skill = {
  definition: {
    name: 'counter',
    title: 'Counter',
    description: 'Increments and returns a counter of real executions, per key.',
    input_schema: {
      type: 'object',
      properties: {
        key: { type: 'string', default: 'default' },
        delay_ms: { type: 'integer', minimum: 0, maximum: 60000, description: 'Answer this long after counting' },
      },
    },
    side_effect_class: 'write',
    annotations: { readOnlyHint: false, idempotentHint: false },
  },
  async run(args, ctx) {
    const key = String(args.key ?? 'default');
    const count = (executions.get(key) ?? 0) + 1;
    executions.set(key, count);
    if (args.delay_ms) await delay(Number(args.delay_ms), undefined, { signal: ctx.signal });
    return { content: [text(String(count))], structured: { key, count, pod_id: ctx.podId } };
  },
};
