import type { AgentHandle } from '@mcpgw/agent-sdk';
import { text, type Skill } from '../skills/skill';

/**
 * The conformance suite's list-change hooks (`test_trigger_tool_change`,
 * `test_trigger_prompt_change`): a fixture tool or prompt is added, or taken
 * away again, and the agent registers anew, so clients watching the lists see
 * them change.
 */
export async function toggleFixture(agent: AgentHandle, list: 'tools' | 'prompts'): Promise<void> {
  const catalogue = agent.catalogue();
  if (list === 'tools') {
    const without = catalogue.skills.filter((skill) => skill.definition.name !== DYNAMIC_TOOL.definition.name);
    return agent.update({
      skills: without.length < catalogue.skills.length ? without : [...catalogue.skills, DYNAMIC_TOOL],
    });
  }
  const prompts = catalogue.prompts;
  if (!prompts) return;
  const without = prompts.prompts.filter((prompt) => prompt.name !== DYNAMIC_PROMPT.name);
  await agent.update({
    prompts: { ...prompts, prompts: without.length < prompts.prompts.length ? without : [...without, DYNAMIC_PROMPT] },
  });
}

/** The tool `toggleFixture` adds and takes away: calling it is a tool error, as if no skill answered it. */
const DYNAMIC_TOOL: Skill = {
  definition: {
    name: 'test_dynamic_tool',
    description: 'A tool that comes and goes (test_trigger_tool_change)',
    input_schema: { type: 'object', properties: {} },
    side_effect_class: 'read',
  },
  run: async () => ({ content: [text('this agent has no skill "test_dynamic_tool"')], isError: true }),
};
const DYNAMIC_PROMPT = { name: 'test_dynamic_prompt', description: 'A prompt that comes and goes' };
