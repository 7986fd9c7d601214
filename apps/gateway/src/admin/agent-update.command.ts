import { InvalidRequestError } from '@mcpgw/contracts';
import type { Command } from './commands';
import { optionalFlag, requireFlag } from './flags';
import { agentA2aCard } from './operations/agents';
import { agentToolChangePolicy } from './operations/tool-changes';
import { toolChangeDeps } from './tool-changes.command';

/**
 * `agent update --agent A [--tool-changes accept|hold|reject|default] [--a2a-card public|private]`:
 * an agent's settings, each owned by its concern (tool pinning; the A2A card).
 * Every setting given is applied; the answer shows each one asked about.
 */
export const AGENT_UPDATE_COMMANDS: Record<string, Command> = {
  'agent update': async (deps, { flags }) => {
    const agentId = requireFlag(flags, 'agent');
    const toolChanges = optionalFlag(flags, 'tool-changes');
    const a2aCard = optionalFlag(flags, 'a2a-card');
    if (toolChanges === undefined && a2aCard === undefined)
      throw new InvalidRequestError(
        'agent update needs --tool-changes accept|hold|reject|default or --a2a-card public|private',
      );
    const policy =
      toolChanges === undefined ? undefined : await agentToolChangePolicy(toolChangeDeps(deps), agentId, toolChanges);
    const card = a2aCard === undefined ? undefined : await agentA2aCard(deps.agents, agentId, a2aCard);
    const lines = [
      ...(policy
        ? [
            `agent ${agentId}: tool changes ${policy.effective}${policy.tool_changes ? '' : ' (the default, TOOL_CHANGES)'}`,
          ]
        : []),
      ...(card ? [`agent ${agentId}: A2A card ${card.a2a_card}`] : []),
    ];
    return { json: { agent_id: agentId, ...policy, ...card }, text: lines.join('\n') };
  },
};
