import { InvalidRequestError } from '@mcpgw/contracts';
import { diffText } from '../tool-pinning/tool-diff';
import type { AdminDeps, Command } from './commands';
import { optionalFlag, requireFlag } from './flags';
import {
  agentToolChangePolicy,
  decideToolChange,
  listToolChanges,
  type ToolChangeDeps,
} from './operations/tool-changes';

/** Tool pinning from the CLI (operations/tool-changes.ts, shared with the management API). */
export const TOOL_CHANGE_COMMANDS: Record<string, Command> = {
  'tools changes': async (deps, { flags }) => {
    const list = await listToolChanges(toolChangeDeps(deps), {
      agentId: optionalFlag(flags, 'agent'),
      status: optionalFlag(flags, 'status'),
      limit: optionalFlag(flags, 'limit'),
    });
    return {
      json: list,
      text: list.length
        ? list
            .map(
              (c) =>
                `agent ${c.agent_id} version ${c.version}: ${c.status}` +
                `${c.decided_by ? ` (${c.decided_by} ${c.decided_at})` : ''}, proposed ${c.created_at}\n${diffText(c.diff)}`,
            )
            .join('\n\n')
        : '(no tool changes)',
    };
  },
  'tools approve': (deps, args) => decide(deps, args.flags, 'approve'),
  'tools reject': (deps, args) => decide(deps, args.flags, 'reject'),
  'agent update': async (deps, { flags }) => {
    const agentId = requireFlag(flags, 'agent');
    const value = optionalFlag(flags, 'tool-changes');
    if (value === undefined)
      throw new InvalidRequestError('agent update needs --tool-changes accept|hold|reject|default');
    const view = await agentToolChangePolicy(toolChangeDeps(deps), agentId, value);
    return {
      json: view,
      text: `agent ${agentId}: tool changes ${view.effective}${view.tool_changes ? '' : ' (the default, TOOL_CHANGES)'}`,
    };
  },
};

async function decide(deps: AdminDeps, flags: Parameters<Command>[1]['flags'], decision: 'approve' | 'reject') {
  const agentId = requireFlag(flags, 'agent');
  const change = await decideToolChange(toolChangeDeps(deps), agentId, requireFlag(flags, 'version'), decision, 'cli');
  return {
    json: change,
    text: `agent ${agentId}: tool change ${change.version} ${change.status}${decision === 'approve' ? '; served from now on' : ''}`,
  };
}

function toolChangeDeps(deps: AdminDeps): ToolChangeDeps {
  return {
    agents: deps.agents,
    toolChanges: deps.toolChanges,
    defaultPolicy: deps.env.TOOL_CHANGES,
    trail: deps.trail,
  };
}
