import { diffText } from '../tool-pinning/tool-diff';
import type { AdminDeps, Command } from './commands';
import { optionalFlag, requireFlag } from './flags';
import { decideToolChange, listToolChanges, type ToolChangeDeps } from './operations/tool-changes';

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
};

async function decide(deps: AdminDeps, flags: Parameters<Command>[1]['flags'], decision: 'approve' | 'reject') {
  const agentId = requireFlag(flags, 'agent');
  const change = await decideToolChange(toolChangeDeps(deps), agentId, requireFlag(flags, 'version'), decision, 'cli');
  return {
    json: change,
    text: `agent ${agentId}: tool change ${change.version} ${change.status}${decision === 'approve' ? '; served from now on' : ''}`,
  };
}

export function toolChangeDeps(deps: AdminDeps): ToolChangeDeps {
  return {
    agents: deps.agents,
    toolChanges: deps.toolChanges,
    defaultPolicy: deps.env.TOOL_CHANGES,
    trail: deps.trail,
  };
}
