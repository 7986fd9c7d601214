import { setTimeout as delay } from 'node:timers/promises';
import type { TaskSupport } from '@mcpgw/contracts';
import { text, type Skill, type SkillContext } from './skill';

/**
 * Tools that run as tasks (io.modelcontextprotocol/tasks) when the client
 * declares the extension: `long_report`, and the fixtures of the conformance
 * suite's `tasks-*` scenarios. Each does its work the way every skill does; the
 * gateway decides whether the call is a task (gateway: tasks/README.md). A
 * question asked in a call's first moments is an MRTR round; asked later, the
 * task shows it on `tasks/get`: the fixtures that must show it wait a little.
 */
function tool(
  name: string,
  description: string,
  taskSupport: TaskSupport,
  properties: Record<string, unknown>,
  run: Skill['run'],
): Skill {
  return {
    definition: {
      name,
      description,
      input_schema: { type: 'object', properties },
      side_effect_class: 'read',
      execution: { taskSupport },
    },
    run,
  };
}

/** Works `ms` milliseconds, reporting progress every `every` ms; stops when the call is cancelled. */
async function work(ctx: SkillContext, ms: number, every = 250): Promise<void> {
  const started = Date.now();
  for (let elapsed = 0; elapsed < ms; elapsed = Date.now() - started) {
    await delay(Math.min(every, ms - elapsed), undefined, { signal: ctx.signal });
    const done = Math.min(Date.now() - started, ms);
    ctx.progress(done, ms, `${done} of ${ms} ms`);
  }
}

function confirmForm(message: string, property: string, type: 'string' | 'boolean') {
  return {
    mode: 'form',
    message,
    requestedSchema: { type: 'object', properties: { [property]: { type } }, required: [property] },
  };
}

function fields(answer: Record<string, unknown>): Record<string, unknown> {
  return answer.action === 'accept' && typeof answer.content === 'object' && answer.content !== null
    ? (answer.content as Record<string, unknown>)
    : {};
}

/**
 * Long enough for the gateway to have made the call a task (TASK_AFTER_MS, 500 ms)
 * and to follow it before the question comes, with room to spare on a busy host.
 */
const AFTER_TASK_MS = 1_500;

export const TASK_SKILLS: readonly Skill[] = [
  tool(
    'long_report',
    'Writes a report over a few seconds, reporting progress; runs as a task when the client can',
    'optional',
    {
      topic: { type: 'string', maxLength: 200 },
      seconds: { type: 'number', minimum: 0, maximum: 600 },
    },
    async (args, ctx) => {
      const seconds = args.seconds === undefined ? 3 : Number(args.seconds);
      await work(ctx, seconds * 1000);
      const topic = String(args.topic ?? 'everything');
      return {
        content: [text(`Report on ${topic}: done after ${seconds} s of work.`)],
        structured: { topic, seconds, pod_id: ctx.podId },
      };
    },
  ),
  tool('greet', 'Says hello (never a task)', 'forbidden', { name: { type: 'string' } }, async (args) => ({
    content: [text(`Hello, ${String(args.name ?? 'World')}!`)],
  })),
  tool(
    'slow_compute',
    'Sleeps `seconds` seconds, then answers',
    'optional',
    { seconds: { type: 'number', minimum: 0, maximum: 600 }, label: { type: 'string' } },
    async (args, ctx) => {
      const seconds = Number(args.seconds ?? 0);
      await work(ctx, seconds * 1000);
      return { content: [text(`computed ${String(args.label ?? '')} after ${seconds} s`)] };
    },
  ),
  tool('failing_job', 'Fails with a tool error after about a second', 'required', {}, async (_args, ctx) => {
    await work(ctx, 1000);
    return { content: [text('the job failed')], isError: true };
  }),
  tool('protocol_error_job', 'Fails with a protocol error after about a second', 'optional', {}, async (_a, ctx) => {
    await work(ctx, 1000);
    return {
      content: [text('internal failure')],
      isError: true,
      protocolError: { code: -32603, message: 'internal failure' },
    };
  }),
  tool(
    'confirm_delete',
    'Asks the user to confirm deleting a file, then deletes it (pretend)',
    'optional',
    { filename: { type: 'string' } },
    async (args, ctx) => {
      await delay(AFTER_TASK_MS, undefined, { signal: ctx.signal });
      const name = String(args.filename ?? 'file');
      const answer = await ctx.ask(
        'elicitation/create',
        confirmForm(`Delete ${name}?`, 'confirm', 'boolean'),
        'confirm',
      );
      return { content: [text(fields(answer).confirm === true ? `deleted ${name}` : `kept ${name}`)] };
    },
  ),
  tool('multi_input', 'Asks two questions at once', 'optional', {}, async (_args, ctx) => {
    await delay(AFTER_TASK_MS, undefined, { signal: ctx.signal });
    const [first, second] = await Promise.all([
      ctx.ask('elicitation/create', confirmForm('First name?', 'name', 'string'), 'first'),
      ctx.ask('elicitation/create', confirmForm('Second name?', 'name', 'string'), 'second'),
    ]);
    return { content: [text(`first=${String(fields(first).name)}; second=${String(fields(second).name)}`)] };
  }),
  tool(
    'unstorable_question',
    'Asks, as a task, a question holding U+0000 (what a faulty agent might send), and says what it was told',
    'optional',
    {},
    async (_args, ctx) => {
      await delay(AFTER_TASK_MS, undefined, { signal: ctx.signal });
      try {
        await ctx.ask('elicitation/create', confirmForm('Name\u0000?', 'name', 'string'), 'bad');
        return { content: [text('the question was asked')] };
      } catch (error) {
        return { content: [text(`the question was refused: ${(error as Error).message}`)] };
      }
    },
  ),
  tool(
    'test_tool_with_task',
    'Asks for a name first (an MRTR round), then works on as a task',
    'required',
    {},
    async (_args, ctx) => {
      const answer = await ctx.ask(
        'elicitation/create',
        confirmForm('What is your name?', 'name', 'string'),
        'user_name',
      );
      await work(ctx, 1000);
      return { content: [text(`Hello, ${String(fields(answer).name ?? 'stranger')}!`)] };
    },
  ),
];
