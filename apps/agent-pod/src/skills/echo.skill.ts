import { text, type Skill } from './skill';

/** Returns its input: `text` as text content, every argument as structured content. */
export const echoSkill: Skill = {
  definition: {
    name: 'echo',
    title: 'Echo',
    description: 'Returns its input unchanged.',
    input_schema: {
      type: 'object',
      properties: { text: { type: 'string', description: 'What to echo back' } },
      required: ['text'],
    },
    side_effect_class: 'read',
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  async run(args) {
    return { content: [text(String(args.text))], structured: args };
  },
};
