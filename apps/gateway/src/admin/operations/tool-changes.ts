import { InvalidRequestError, NotFoundError } from '@mcpgw/contracts';
import type { AgentsStore } from '../../agents/agents.store';
import type { AuditTrail } from '../../audit/audit-trail.service';
import type { ToolChangeStatus } from '../../database/schema';
import type { ToolChangeView, ToolChangesStore } from '../../tool-pinning/tool-changes.store';
import { TOOL_CHANGE_POLICIES, type ToolChangePolicy } from '../../tool-pinning/tool-definitions';
import { diffProposal, type ToolDiff } from '../../tool-pinning/tool-diff';
import { requireAgent } from './agents';
import { recordLimit } from './records';

/**
 * Tool pinning for the operator (../../tool-pinning/README.md), once for the
 * admin CLI (`tools changes|approve|reject`, `agent update --tool-changes`)
 * and the management API.
 */

export interface ToolChangeDeps {
  agents: AgentsStore;
  toolChanges: ToolChangesStore;
  /** TOOL_CHANGES: the policy of an agent that has none of its own. */
  defaultPolicy: ToolChangePolicy;
  /** Each decision is a `tool_change` row of the audit trail (and an `admin_action` row, as every operation is). */
  trail: AuditTrail;
}

/** A change with its diff against the definitions approved when it was proposed. */
export interface ToolChangeDetail extends ToolChangeView {
  diff: ToolDiff[];
}

const STATUSES: readonly ToolChangeStatus[] = ['pending', 'approved', 'rejected', 'superseded'];

/** Changes, newest first: pending ones by default, of one agent or all. */
export async function listToolChanges(
  deps: ToolChangeDeps,
  filter: { agentId?: string; status?: string; limit?: string | number },
): Promise<ToolChangeDetail[]> {
  if (filter.agentId !== undefined) await requireAgent(deps.agents, filter.agentId);
  const status = filter.status ?? 'pending';
  if (status !== 'all' && !(STATUSES as readonly string[]).includes(status)) {
    throw new InvalidRequestError(`status: one of ${STATUSES.join(', ')}, or all`);
  }
  const changes = await deps.toolChanges.list({
    agentId: filter.agentId,
    status: status === 'all' ? undefined : (status as ToolChangeStatus),
    limit: recordLimit(filter.limit),
  });
  return changes.map(detail);
}

/** Approve or reject a pending change; `by` says who (`cli`, `admin:<token id>`). */
export async function decideToolChange(
  deps: ToolChangeDeps,
  agentId: string,
  version: string | number,
  decision: 'approve' | 'reject',
  by: string,
): Promise<ToolChangeDetail> {
  const number = Number(version);
  if (!Number.isSafeInteger(number) || number < 1) throw new InvalidRequestError('version: a whole number from 1');
  await requireAgent(deps.agents, agentId);
  const status = decision === 'approve' ? 'approved' : 'rejected';
  const decided = detail(await deps.toolChanges.decide(agentId, number, status, by));
  // Beside the admin action's own row: the change's story (proposed, then approved or rejected) reads on one kind.
  deps.trail.toolChange({
    agentId,
    version: number,
    outcome: status,
    principal: by,
    tools: decided.diff.map((d) => d.tool),
  });
  return decided;
}

export interface ToolChangePolicyView {
  agent_id: string;
  /** The agent's own policy, or null: the gateway's default. */
  tool_changes: ToolChangePolicy | null;
  /** What applies: its own, else TOOL_CHANGES. */
  effective: ToolChangePolicy;
}

/** Show or set an agent's tool-change policy (`default`: back to TOOL_CHANGES). */
export async function agentToolChangePolicy(
  deps: ToolChangeDeps,
  agentId: string,
  value?: string,
): Promise<ToolChangePolicyView> {
  await requireAgent(deps.agents, agentId);
  if (value !== undefined) {
    if (value !== 'default' && !(TOOL_CHANGE_POLICIES as readonly string[]).includes(value)) {
      throw new InvalidRequestError(`tool-changes: one of ${TOOL_CHANGE_POLICIES.join(', ')}, or default`);
    }
    const policy = value === 'default' ? null : (value as ToolChangePolicy);
    if (!(await deps.toolChanges.setPolicy(agentId, policy))) throw new NotFoundError(`no agent ${agentId}`);
  }
  const own = (await deps.toolChanges.policyOf(agentId)) ?? null;
  return { agent_id: agentId, tool_changes: own, effective: own ?? deps.defaultPolicy };
}

function detail(change: ToolChangeView): ToolChangeDetail {
  return { ...change, diff: diffProposal(change.proposed, change.approved_before) };
}
