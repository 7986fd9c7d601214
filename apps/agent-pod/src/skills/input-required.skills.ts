import { text, type Skill, type SkillContext } from './skill';

/**
 * The fixture tools of the conformance suite's `input-required-result-*`
 * scenarios (SEP-2322, MRTR). Each asks the client the way every skill does
 * (`ctx.ask`, over the bus); the question keys are the ones the suite expects.
 * A 2026-07-28 client gets them as an InputRequiredResult and retries; an
 * older one answers them inside its stream (gateway: mcp/input-required/README.md).
 */
const NO_ARGUMENTS = { type: 'object', properties: {} };

function fixture(name: string, description: string, run: Skill['run']): Skill {
  return { definition: { name, description, input_schema: NO_ARGUMENTS, side_effect_class: 'read' }, run };
}

function form(message: string, property: string, type: 'string' | 'boolean'): Record<string, unknown> {
  return {
    mode: 'form',
    message,
    requestedSchema: { type: 'object', properties: { [property]: { type } }, required: [property] },
  };
}

const askName = (ctx: SkillContext, key = 'user_name') =>
  ctx.ask('elicitation/create', form('What is your name?', 'name', 'string'), key);

const sample = (ctx: SkillContext, key: string, prompt: string) =>
  ctx.ask(
    'sampling/createMessage',
    { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 50 },
    key,
  );

const listRoots = (ctx: SkillContext) => ctx.ask('roots/list', {}, 'client_roots');

/** The fields an accepted elicitation returned. */
function fields(answer: Record<string, unknown>): Record<string, unknown> {
  return answer.action === 'accept' && typeof answer.content === 'object' && answer.content !== null
    ? (answer.content as Record<string, unknown>)
    : {};
}

function sampled(answer: Record<string, unknown>): string {
  const content = answer.content as { type?: string; text?: string } | undefined;
  return content?.type === 'text' ? String(content.text) : '(no text)';
}

export const INPUT_REQUIRED_SKILLS: readonly Skill[] = [
  fixture('test_input_required_result_elicitation', 'Asks the user for their name', async (_args, ctx) => {
    const answer = await askName(ctx);
    return { content: [text(`Hello, ${String(fields(answer).name ?? 'stranger')}!`)] };
  }),
  fixture('test_input_required_result_sampling', 'Asks the client to sample an LLM', async (_args, ctx) => {
    const answer = await sample(ctx, 'capital_question', 'What is the capital of France?');
    return { content: [text(`Sampled: ${sampled(answer)}`)] };
  }),
  fixture('test_input_required_result_list_roots', "Asks for the client's roots", async (_args, ctx) => {
    const answer = await listRoots(ctx);
    const roots = Array.isArray(answer.roots) ? (answer.roots as { uri?: string }[]) : [];
    return { content: [text(`Roots: ${roots.map((r) => r.uri).join(', ') || '(none)'}`)] };
  }),
  fixture('test_input_required_result_request_state', 'Asks for a confirmation', async (_args, ctx) => {
    const answer = await ctx.ask('elicitation/create', form('Please confirm', 'ok', 'boolean'), 'confirm');
    return { content: [text(`state-ok: confirmed=${String(fields(answer).ok === true)}`)] };
  }),
  fixture('test_input_required_result_tampered_state', 'Asks for a confirmation', async (_args, ctx) => {
    const answer = await ctx.ask('elicitation/create', form('Please confirm', 'ok', 'boolean'), 'confirm');
    return { content: [text(`confirmed=${String(fields(answer).ok === true)}`)] };
  }),
  fixture(
    'test_input_required_result_multiple_inputs',
    'Asks for a name, a sample and the roots at once',
    async (_args, ctx) => {
      const [name, greeting, roots] = await Promise.all([
        askName(ctx),
        sample(ctx, 'greeting', 'Generate a greeting'),
        listRoots(ctx),
      ]);
      const count = Array.isArray(roots.roots) ? roots.roots.length : 0;
      return {
        content: [text(`name=${String(fields(name).name)}; greeting=${sampled(greeting)}; roots=${count}`)],
      };
    },
  ),
  fixture('test_input_required_result_multi_round', 'Asks two questions, one after the other', async (_args, ctx) => {
    const name = await ctx.ask('elicitation/create', form('Step 1: What is your name?', 'name', 'string'), 'step1');
    const color = await ctx.ask(
      'elicitation/create',
      form('Step 2: What is your favorite color?', 'color', 'string'),
      'step2',
    );
    return { content: [text(`${String(fields(name).name)} likes ${String(fields(color).color)}`)] };
  }),
  fixture(
    'test_input_required_result_capabilities',
    'Asks by elicitation and by sampling; the gateway asks only what the client declared',
    async (_args, ctx) => {
      const [name, greeting] = await Promise.allSettled([askName(ctx), sample(ctx, 'greeting', 'Say hello')]);
      const said = (r: PromiseSettledResult<Record<string, unknown>>, show: (v: Record<string, unknown>) => string) =>
        r.status === 'fulfilled' ? show(r.value) : `unavailable (${(r.reason as Error).message})`;
      return {
        content: [
          text(`elicitation: ${said(name, (v) => String(fields(v).name))}; sampling: ${said(greeting, sampled)}`),
        ],
      };
    },
  ),
];
