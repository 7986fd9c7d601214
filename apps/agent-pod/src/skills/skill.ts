import type { Skill as SdkSkill, SkillContext, SkillOutput } from '@mcpgw/agent-sdk';

export { text, type SkillContext, type SkillOutput } from '@mcpgw/agent-sdk';

/** The mock agent's skills: registered definitions and their `run`, as the agent SDK takes them. */
export interface Skill extends SdkSkill {
  run(args: Record<string, unknown>, ctx: SkillContext): Promise<SkillOutput>;
}
