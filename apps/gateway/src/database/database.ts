import { postgresOptions } from '@mcpgw/persistence';
import type { DataSourceOptions } from 'typeorm';
import { Gateway1764450000000 } from './migrations/1764450000000-gateway';
import { Idempotency1764460000000 } from './migrations/1764460000000-idempotency';
import { Grants1764470000000 } from './migrations/1764470000000-grants';
import { SessionLogLevel1764480000000 } from './migrations/1764480000000-session-log-level';
import { AgentResourcesPrompts1764490000000 } from './migrations/1764490000000-agent-resources-prompts';
import { SessionClientCapabilities1764500000000 } from './migrations/1764500000000-session-client-capabilities';
import { NatsCredentials1764510000000 } from './migrations/1764510000000-nats-credentials';
import { AgentQuotas1764515000000 } from './migrations/1764515000000-agent-quotas';
import { SessionResourceSubscriptions1764523130000 } from './migrations/1764523130000-session-resource-subscriptions';
import { Files1764600000000 } from './migrations/1764600000000-files';
import { Webhooks1764610000000 } from './migrations/1764610000000-webhooks';
import { ResumableStreams1764620000000 } from './migrations/1764620000000-resumable-streams';
import { Tasks1764630000000 } from './migrations/1764630000000-tasks';
import { FilesOwnerIndex1764640000000 } from './migrations/1764640000000-files-owner-index';
import { NatsCredentialsExpiry1764652200000 } from './migrations/1764652200000-nats-credentials-expiry';
import { WebhookEvents1764660000000 } from './migrations/1764660000000-webhook-events';
import { AgentCompletions1764670000000 } from './migrations/1764670000000-agent-completions';
import { AgentAuthMethods1764680000000 } from './migrations/1764680000000-agent-auth-methods';
import { AdminTokens1764690000000 } from './migrations/1764690000000-admin-tokens';
import { AdminSessions1764700000000 } from './migrations/1764700000000-admin-sessions';
import { WebhookEventsLease1764715000000 } from './migrations/1764715000000-webhook-events-lease';
import { AdminLoginCodes1764716000000 } from './migrations/1764716000000-admin-login-codes';
import { AgentPods1764717000000 } from './migrations/1764717000000-agent-pods';
import { IdempotencySurface1764718000000 } from './migrations/1764718000000-idempotency-surface';
import { ToolChanges1764719000000 } from './migrations/1764719000000-tool-changes';
import { Audit1764720000000 } from './migrations/1764720000000-audit';
import { A2aCard1764721000000 } from './migrations/1764721000000-a2a-card';
import { A2aPushConfigs1764722000000 } from './migrations/1764722000000-a2a-push-configs';
import { AgentConversation1764723000000 } from './migrations/1764723000000-agent-conversation';
import { IdempotencyFillfactor1764724000000 } from './migrations/1764724000000-idempotency-fillfactor';
import { TaskFingerprint1764725000000 } from './migrations/1764725000000-task-fingerprint';

/** The gateway keeps its tables in this schema. */
export const GATEWAY_SCHEMA = 'gateway';

/** Where the gateway's caches hear that a row changed (see cache/README.md). */
export const CACHE_CHANNEL = 'mcpgw_gateway_cache';

/** Where each replica's webhook dispatcher hears of new outbox rows (sent on commit; webhooks/README.md). */
export const OUTBOX_CHANNEL = 'mcpgw_webhook_outbox';
/** Where a resumed stream hears that its writer stored another event (see streams/README.md). */
export const STREAM_CHANNEL = 'mcpgw_gateway_streams';

export function gatewayDatabase(url: string, poolSize?: number): DataSourceOptions {
  return postgresOptions({
    url,
    schema: GATEWAY_SCHEMA,
    poolSize,
    migrations: [
      Gateway1764450000000,
      Idempotency1764460000000,
      Grants1764470000000,
      SessionLogLevel1764480000000,
      AgentResourcesPrompts1764490000000,
      SessionClientCapabilities1764500000000,
      NatsCredentials1764510000000,
      AgentQuotas1764515000000,
      SessionResourceSubscriptions1764523130000,
      Files1764600000000,
      Webhooks1764610000000,
      ResumableStreams1764620000000,
      Tasks1764630000000,
      FilesOwnerIndex1764640000000,
      NatsCredentialsExpiry1764652200000,
      WebhookEvents1764660000000,
      AgentCompletions1764670000000,
      AgentAuthMethods1764680000000,
      AdminTokens1764690000000,
      AdminSessions1764700000000,
      WebhookEventsLease1764715000000,
      AdminLoginCodes1764716000000,
      AgentPods1764717000000,
      IdempotencySurface1764718000000,
      ToolChanges1764719000000,
      Audit1764720000000,
      A2aCard1764721000000,
      A2aPushConfigs1764722000000,
      AgentConversation1764723000000,
      IdempotencyFillfactor1764724000000,
      TaskFingerprint1764725000000,
    ],
  });
}
