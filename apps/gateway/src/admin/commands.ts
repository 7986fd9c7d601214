import { AGENT_ID_PATTERN, InvalidRequestError } from '@mcpgw/contracts';
import type { GatewayEnv } from '../config/gateway.env';
import type { AgentsStore, AuthMethods } from '../agents/agents.store';
import type { AgentQuotasStore } from '../quotas/agent-quotas.store';
import { QUOTA_LIMITS, type QuotaLimits, type QuotaOverrides } from '../quotas/quota-limits';
import type { ApiKeysStore } from '../auth/api-keys.store';
import type { GrantKeysService } from '../grants/grant-keys.service';
import type { GrantRevocationsStore } from '../grants/grant-revocations.store';
import type { PersonalAccessTokensStore } from '../grants/personal-access-tokens.store';
import type { NatsCredentialsStore } from '../nats/nats-credentials.store';
import type { AdminTokensStore } from '../admin-api/admin-tokens.store';
import type { AdminLoginCodesStore } from '../admin-api/admin-login-codes.store';
import type { PodsStore } from '../agents/pods.store';
import { consoleLoginLink, consoleToken } from './console-token.command';
import { optionalFlag, requireFlag } from './flags';
import { agentCredentials } from './nats-credentials.command';
import { listAgents, showAgent } from './operations/agents';
import { QUOTA_MAX, agentQuotas } from './operations/quotas';
import { callList, callShow } from './calls.command';
import { createPat, mintGrant, revokeGrant } from './operations/grants';
import { RECORD_COMMANDS } from './records.command';
import { AGENT_UPDATE_COMMANDS } from './agent-update.command';
import { TOOL_CHANGE_COMMANDS } from './tool-changes.command';
import { AUDIT_COMMANDS } from './audit.command';
import type { AuditStore } from '../audit/audit.store';
import type { AuditTrail } from '../audit/audit-trail.service';
import type { ToolChangesStore } from '../tool-pinning/tool-changes.store';
import type { OperatorRecordsStore } from './operations/records';
import type { IdempotencyStore } from '../idempotency/idempotency.store';
import type { DeliveryView, WebhookDeliveryLog } from '../webhooks/webhook-delivery-log.store';
import type { WebhookView, WebhooksStore } from '../webhooks/webhooks.store';

export interface AdminDeps {
  agents: AgentsStore;
  apiKeys: ApiKeysStore;
  grantKeys: GrantKeysService;
  revocations: GrantRevocationsStore;
  pats: PersonalAccessTokensStore;
  natsCredentials: NatsCredentialsStore;
  maxGrantTtlSeconds: number;
  quotas: AgentQuotasStore;
  /** The QUOTA_* defaults of this environment. */
  quotaDefaults: QuotaLimits;
  webhooks: WebhooksStore;
  deliveryLog: WebhookDeliveryLog;
  adminTokens: AdminTokensStore;
  loginCodes: AdminLoginCodesStore;
  records: OperatorRecordsStore;
  /** The agents' pods (agent_pods): `agent list` counts those online. */
  pods: PodsStore;
  idempotency: IdempotencyStore;
  toolChanges: ToolChangesStore;
  audit: AuditStore;
  /** What the commands tell the audit trail beyond their own row (a tool change's decision). */
  trail: AuditTrail;
  env: Pick<
    GatewayEnv,
    | 'TOOL_CHANGES'
    | 'NATS_URL'
    | 'NATS_CREDS'
    | 'BUS_PREFIX'
    | 'NATS_ACCOUNT_PUBLIC_KEY'
    | 'NATS_ACCOUNT_SIGNING_SEED_FILE'
    | 'NATS_OPERATOR_SEED_FILE'
    | 'NATS_SYSTEM_CREDS'
  >;
}

export interface Parsed {
  words: string[];
  flags: Record<string, string | boolean | undefined>;
}

export interface CommandOutput {
  /** For --json. */
  json: unknown;
  /** For people. */
  text: string;
  /** Lines written as they come, instead of `text` and `json` (JSON lines: `audit export`). */
  stream?: AsyncIterable<string>;
  /** Exit with this (the output printed): `audit verify` of a broken trail is 3. */
  exitCode?: number;
}

export type Command = (deps: AdminDeps, args: Parsed) => Promise<CommandOutput>;

/** Every command, by its first two words. */
export const COMMANDS: Record<string, Command> = {
  'agent list': async ({ agents, pods }) => {
    const list = await listAgents(agents, pods);
    return {
      json: list,
      text: list.length
        ? list
            .map((a) => `${a.id}\tworkspace=${a.workspace_id}\ttools=${a.tools}\tpods_online=${a.pods_online}`)
            .join('\n')
        : '(no agents)',
    };
  },
  'agent show': async ({ agents, pods }, { flags }) => {
    const detail = await showAgent(agents, pods, requireFlag(flags, 'agent'));
    const podLines = detail.pods.map(
      (pod) =>
        `  ${pod.pod_id}\t${pod.online ? 'online' : 'offline'}\tlast_seen=${pod.last_seen_at}\tregistered=${pod.registered_at}`,
    );
    return {
      json: detail,
      text: [
        `${detail.id}\tworkspace=${detail.workspace_id}\tlast_registered=${detail.last_registered_at ?? 'never'}`,
        `pods (${detail.pods.filter((pod) => pod.online).length} online of ${detail.pods.length}):`,
        ...(podLines.length ? podLines : ['  (none for a day)']),
        `tools: ${detail.tools.map((tool) => tool.name).join(', ') || '(none)'}`,
      ].join('\n'),
    };
  },
  'agent create': async ({ agents }, { flags }) => {
    const id = requireFlag(flags, 'id');
    const workspace = requireFlag(flags, 'workspace');
    for (const value of [id, workspace]) {
      if (!AGENT_ID_PATTERN.test(value)) throw new InvalidRequestError(`${value}: use 1-64 of A-Z a-z 0-9 _ -`);
    }
    await agents.ensure(id, workspace);
    return { json: { id, workspace_id: workspace }, text: `agent ${id} (workspace ${workspace})` };
  },
  'agent quotas': async (deps, { flags }) => {
    const agentId = requireFlag(flags, 'agent');
    const changes: Partial<QuotaOverrides> = {};
    for (const name of QUOTA_LIMITS) {
      const value = optionalFlag(flags, name.replaceAll('_', '-'));
      if (value !== undefined) changes[name] = quotaValue(name, value);
    }
    const view = await agentQuotas(deps, agentId, changes);
    const line = (name: (typeof QUOTA_LIMITS)[number]) =>
      `${name}\t${view.limits[name] || 'no limit'}\t${view.overrides[name] === null ? '(default)' : '(set for this agent)'}`;
    return {
      json: view,
      text: [`quotas of agent ${agentId}, per API key and per grant task:`, ...QUOTA_LIMITS.map(line)].join('\n'),
    };
  },
  'agent auth': async ({ agents }, { flags }) => {
    const agentId = requireFlag(flags, 'agent');
    const changes: Partial<AuthMethods> = {};
    for (const [flag, method] of [
      ['api-keys', 'api_keys'],
      ['oauth', 'oauth'],
    ] as const) {
      const value = optionalFlag(flags, flag);
      if (value === undefined) continue;
      if (value !== 'on' && value !== 'off') throw new InvalidRequestError(`--${flag} takes on or off`);
      changes[method] = value === 'on';
    }
    const methods = Object.keys(changes).length
      ? await agents.setAuthMethods(agentId, changes)
      : (await agents.list()).some((a) => a.id === agentId)
        ? await agents.authMethods(agentId)
        : undefined;
    if (!methods) throw new InvalidRequestError(`no agent ${agentId}`);
    const state = (on: boolean) => (on ? 'on' : 'off');
    return {
      json: { agent_id: agentId, ...methods },
      text: `agent ${agentId}: API keys ${state(methods.api_keys)}, OAuth ${state(methods.oauth)}`,
    };
  },
  'apikey create': async ({ apiKeys }, { flags }) => {
    const created = await apiKeys.create(requireFlag(flags, 'agent'), optionalFlag(flags, 'label'));
    return {
      json: created,
      text: `API key ${created.id} for agent ${created.agent_id}\n${created.key}\n(shown once: store it now)`,
    };
  },
  'apikey list': async ({ apiKeys }, { flags }) => {
    const list = await apiKeys.list(optionalFlag(flags, 'agent'));
    return {
      json: list,
      text: list.length
        ? list
            .map((k) => `${k.id}\tagent=${k.agent_id}\t${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}`)
            .join('\n')
        : '(no keys)',
    };
  },
  'apikey revoke': async ({ apiKeys }, { words }) => {
    const id = words[2];
    if (!id) throw new InvalidRequestError('apikey revoke needs the key id');
    const revoked = await apiKeys.revoke(id);
    return { json: revoked, text: `revoked ${revoked.id} (agent ${revoked.agent_id})` };
  },
  'grant mint': async (deps, { flags }) => {
    const view = await mintGrant(deps, {
      workspaceId: requireFlag(flags, 'workspace'),
      agentId: requireFlag(flags, 'agent'),
      taskId: requireFlag(flags, 'task'),
      tools: list(requireFlag(flags, 'tools')),
      credentials: list(optionalFlag(flags, 'credentials') ?? ''),
      ttlSeconds: Number(optionalFlag(flags, 'ttl') ?? 3600),
    }).catch((error: Error) => {
      // The CLI's names for the operation's fields.
      throw error instanceof InvalidRequestError
        ? new InvalidRequestError(error.message.replace(/^ttl /, '--ttl '))
        : error;
    });
    return {
      json: view,
      text: `RuntimeGrant ${view.id} for task ${view.task_id} (expires ${view.expires_at})\n${view.grant}`,
    };
  },
  'grant revoke': async (deps, { words }) => {
    const id = words[2];
    if (!id) throw new InvalidRequestError('grant revoke needs the grant id');
    const revoked = await revokeGrant(deps, id);
    return { json: revoked, text: `revoked grant ${revoked.grant_id}` };
  },
  'agent credentials': agentCredentials,
  'call show': callShow,
  'call list': callList,
  'webhook add': async ({ webhooks }, { flags }) => {
    const created = await webhooks.add(
      requireFlag(flags, 'agent'),
      requireFlag(flags, 'url'),
      list(requireFlag(flags, 'events')),
    );
    return {
      json: created,
      text: `webhook ${created.id} for agent ${created.agent_id}: ${created.url} (${created.events.join(', ')})\n${created.secret}\n(the signing secret, shown once: store it now)`,
    };
  },
  'webhook list': async ({ webhooks }, { flags }) => {
    const hooks = await webhooks.list(undefined, optionalFlag(flags, 'agent'));
    return { json: hooks, text: hooks.length ? hooks.map(webhookLine).join('\n') : '(no webhooks)' };
  },
  'webhook remove': async ({ webhooks }, { words }) => {
    const removed = await webhooks.remove(requireWord(words, 'webhook remove needs the webhook id'));
    return { json: removed, text: `removed webhook ${removed.id} (agent ${removed.agent_id})` };
  },
  'webhook enable': async ({ webhooks }, { words }) => {
    const enabled = await webhooks.enable(requireWord(words, 'webhook enable needs the webhook id'));
    return { json: enabled, text: `webhook ${enabled.id} enabled: events are sent to ${enabled.url} again` };
  },
  'webhook rotate-secret': async ({ webhooks }, { words }) => {
    const rotated = await webhooks.rotateSecret(requireWord(words, 'webhook rotate-secret needs the webhook id'));
    return {
      json: rotated,
      text: `webhook ${rotated.id}: new secret\n${rotated.secret}\n(shown once; the previous secret also signs until ${rotated.previous_secret_expires_at ?? 'now'})`,
    };
  },
  'webhook reseal-secrets': async ({ webhooks }) => {
    const report = await webhooks.resealSecrets();
    const lines = [
      `${report.resealed} webhook(s) sealed again with WEBHOOK_SECRET_KEY; ${report.current} already were`,
    ];
    if (report.unreadable.length) {
      lines.push(
        `${report.unreadable.length} open with no configured key, left as they are (give each a new secret: webhook rotate-secret): ${report.unreadable.join(', ')}`,
      );
    } else {
      lines.push('no stored secret needs WEBHOOK_SECRET_PREVIOUS_KEYS any more');
    }
    return { json: report, text: lines.join('\n') };
  },
  'webhook deliveries': async ({ deliveryLog }, { flags }) => {
    const deliveries = await deliveryLog.deliveries(requireFlag(flags, 'webhook'));
    return { json: deliveries, text: deliveries.length ? deliveries.map(deliveryLines).join('\n') : '(no deliveries)' };
  },
  'webhook redeliver': async ({ deliveryLog }, { words }) => {
    const delivery = await deliveryLog.redeliver(requireWord(words, 'webhook redeliver needs the delivery id'));
    return { json: delivery, text: `delivery ${delivery.id} will be sent again` };
  },
  'console token': consoleToken,
  'console login-link': consoleLoginLink,
  ...RECORD_COMMANDS,
  ...TOOL_CHANGE_COMMANDS,
  ...AUDIT_COMMANDS,
  ...AGENT_UPDATE_COMMANDS,
  'pat create': async ({ pats }, { flags }) => {
    const created = await createPat(pats, optionalFlag(flags, 'label'));
    return { json: created, text: `personal access token ${created.id}\n${created.token}\n(shown once: store it now)` };
  },
};

function webhookLine(hook: WebhookView): string {
  const state = hook.disabled_at ? `disabled ${hook.disabled_at} (${hook.disabled_reason})` : 'active';
  return `${hook.id}\tagent=${hook.agent_id}\t${hook.url}\tevents=${hook.events.join(',')}\t${state}`;
}

function deliveryLines(delivery: DeliveryView): string {
  const attempts = delivery.attempt_log.map(
    (a) =>
      `    ${a.started_at}\t${a.outcome}\t${a.response_code ?? '-'}\t${a.duration_ms} ms${a.error ? `\t${a.error}` : ''}`,
  );
  return [
    `${delivery.id}\t${delivery.event_type}\t${delivery.status}\tattempts=${delivery.attempts}`,
    ...attempts,
  ].join('\n');
}

function requireWord(words: string[], message: string): string {
  if (!words[2]) throw new InvalidRequestError(message);
  return words[2];
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** A limit from the command line: a number (the range is checked by `agentQuotas`), or `default` to drop the agent's own. */
function quotaValue(name: string, value: string): number | null {
  if (value === 'default') return null;
  if (!/^\d+$/.test(value)) {
    throw new InvalidRequestError(
      `--${name.replaceAll('_', '-')} must be a whole number 0-${QUOTA_MAX} (0: no limit) or default`,
    );
  }
  return Number(value);
}
