import { Logger } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import { text, type Skill } from './skill';

const executions = new Map<string, number>();
const logger = new Logger('Counter');

/**
 * Counts how many times this pod really executed it, per `key`. Idempotent
 * replays served by the gateway never reach here, so the count proves them.
 * The count is this pod's only: each run is also logged (`counter run`, at
 * info, its key as `counter_key` and its pod), so that a test gathering every
 * pod's lines sees a key run on two pods, which neither count shows.
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
    logger.log({
      msg: 'counter run',
      counter_key: key,
      count,
      attempt: ctx.attempt,
      pod_id: ctx.podId,
      call_id: ctx.callId,
    });
    if (args.delay_ms) await delay(Number(args.delay_ms), undefined, { signal: ctx.signal });
    return { content: [text(String(count))], structured: { key, count, pod_id: ctx.podId } };
  },
};
