import { Inject, Injectable, Logger } from '@nestjs/common';
import { InvalidRequestError, type SkillDefinition } from '@mcpgw/contracts';
import { AuditTrail } from '../audit/audit-trail.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import type { GatewayDb } from '../database/schema';
import { ToolChangesStore } from './tool-changes.store';
import { admit, diffCatalogue } from './tool-definitions';

/**
 * Registration's side of tool pinning (README.md here): which of the
 * definitions an agent registers are served, under the agent's policy (or
 * TOOL_CHANGES), and what waits for an operator. Runs in the registration's
 * transaction, so the tools served and the change recorded commit together.
 */
@Injectable()
export class ToolPinning {
  private readonly logger = new Logger(ToolPinning.name);

  constructor(
    private readonly changes: ToolChangesStore,
    private readonly trail: AuditTrail,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  /** For `AgentsStore.replaceTools`: given the tools served until now, the tools to serve. */
  admitting(agentId: string, registered: SkillDefinition[]) {
    return async (tx: GatewayDb, approved: SkillDefinition[]): Promise<SkillDefinition[]> => {
      const policy = (await this.changes.policyOf(agentId, tx)) ?? this.env.TOOL_CHANGES;
      const diff = diffCatalogue(approved, registered);
      const admission = admit(policy, diff);
      const names = [...diff.changed.map((change) => change.registered.name), ...diff.added.map((d) => d.name)];
      const record = (outcome: string, version?: number) =>
        this.trail.toolChange({ agentId, version, outcome, principal: `agent:${agentId}`, tools: names });
      if (!admission.ok) {
        this.logger.warn({ msg: 'registration refused: tool definitions changed', agent_id: agentId, policy });
        record('refused');
        throw new InvalidRequestError(admission.reason);
      }
      const before = diff.changed.map((change) => change.approved);
      if (admission.proposal) {
        const { version, status } = await this.changes.propose(tx, agentId, admission.proposal, before);
        if (status === 'pending') record('held', version);
        this.logger.warn({
          msg: status === 'pending' ? 'tool change held for approval' : 'tool change rejected before: still held',
          agent_id: agentId,
          version,
          tools: admission.proposal.map((definition) => definition.name),
        });
      } else if (diff.changed.length || diff.added.length) {
        const proposed = [...diff.changed.map((change) => change.registered), ...diff.added];
        record('accepted', await this.changes.accepted(tx, agentId, proposed, before));
      } else {
        // The approved catalogue again (or less of it): nothing of an earlier proposal waits.
        await this.changes.supersede(tx, agentId);
      }
      return admission.served;
    };
  }
}
