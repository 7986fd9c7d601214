import { text, type Skill } from './skill';

/** Always a tool-level error (MCP `isError: true`), never a protocol error. */
export const failSkill: Skill = {
  definition: {
    name: 'fail',
    title: 'Fail',
    description: 'Always fails with a tool error, for testing error handling.',
    input_schema: {
      type: 'object',
      properties: { reason: { type: 'string' } },
      additionalProperties: false,
    },
    side_effect_class: 'read',
  },
  async run(args) {
    return { content: [text(`fail: ${String(args.reason ?? 'this skill always fails')}`)], isError: true };
  },
};
