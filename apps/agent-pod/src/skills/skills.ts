import type { Skill } from './skill';
import { CONFORMANCE_CLIENT_SKILLS, CONFORMANCE_SKILLS } from './conformance.skills';
import { counterSkill } from './counter.skill';
import { crmLookupSkill } from './crm-lookup.skill';
import { echoSkill } from './echo.skill';
import { INPUT_REQUIRED_SKILLS } from './input-required.skills';
import { failSkill } from './fail.skill';
import { recallSkill } from './recall.skill';
import { screenshotSkill } from './screenshot.skill';
import { sleepSkill } from './sleep.skill';
import { summarizePdfSkill } from './summarize-pdf.skill';
import { SUBSCRIPTION_SKILLS } from './subscriptions.skills';
import { TASK_SKILLS } from './tasks.skills';
import { webSearchSkill } from './web-search.skill';

/** Every skill the mock agent ships, by name. */
export const MOCK_AGENT_SKILLS: readonly Skill[] = [
  webSearchSkill,
  screenshotSkill,
  echoSkill,
  sleepSkill,
  failSkill,
  recallSkill,
  counterSkill,
  crmLookupSkill,
  summarizePdfSkill,
  ...CONFORMANCE_SKILLS,
  ...CONFORMANCE_CLIENT_SKILLS,
  ...INPUT_REQUIRED_SKILLS,
  ...SUBSCRIPTION_SKILLS,
  ...TASK_SKILLS,
];

export function skillsByName(skills: readonly Skill[]): Map<string, Skill> {
  return new Map(skills.map((skill) => [skill.definition.name, skill]));
}
