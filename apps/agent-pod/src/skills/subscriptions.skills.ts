import { toggleFixture } from '../agent/list-changes';
import { text, type Skill } from './skill';

/**
 * Hooks that change what clients watch (subscriptions/listen, 2025-11-25
 * resources/subscribe): the conformance suite's `test_trigger_*_change` tools,
 * and a resource update an agent publishes.
 */
const NO_ARGUMENTS = { type: 'object', properties: {} };

export const SUBSCRIPTION_SKILLS: readonly Skill[] = [
  {
    definition: {
      name: 'test_trigger_tool_change',
      description: 'Adds or removes test_dynamic_tool: the tool list changes',
      input_schema: NO_ARGUMENTS,
      side_effect_class: 'write',
    },
    async run(_args, ctx) {
      await toggleFixture(ctx.agent, 'tools');
      return { content: [text('The tool list changed')] };
    },
  },
  {
    definition: {
      name: 'test_trigger_prompt_change',
      description: 'Adds or removes test_dynamic_prompt: the prompt list changes',
      input_schema: NO_ARGUMENTS,
      side_effect_class: 'write',
    },
    async run(_args, ctx) {
      await toggleFixture(ctx.agent, 'prompts');
      return { content: [text('The prompt list changed')] };
    },
  },
  {
    definition: {
      name: 'touch_resource',
      description: 'Says the resource at uri was updated (notifications/resources/updated to its subscribers)',
      input_schema: { type: 'object', properties: { uri: { type: 'string', minLength: 1 } }, required: ['uri'] },
      side_effect_class: 'write',
    },
    async run(args, ctx) {
      ctx.resourceUpdated(String(args.uri));
      return { content: [text(`Updated ${String(args.uri)}`)] };
    },
  },
];
