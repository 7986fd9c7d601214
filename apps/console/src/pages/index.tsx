import { useRoute } from '../hooks';
import { pageOf } from '../routes';
import { AgentPage, AgentsPage } from './agents';
import { ApiKeysPage } from './api-keys';
import { AuditPage } from './audit';
import { CallPage, CallsPage } from './calls';
import { ChannelPage, ChannelsPage } from './channels';
import { KeysPage } from './keys';
import { Missing } from './missing';
import { OverviewPage } from './overview';
import { PlaygroundPage } from './playground';
import { QuotasPage } from './quotas';
import { ToolChangesPage } from './tool-changes';
import { DeliveriesPage, WebhooksPage } from './webhooks';

/**
 * The page of the current route. Each page is keyed by its route, so leaving it
 * drops its state: a new API key held by the keys page is gone from the DOM and
 * from memory once the operator navigates away.
 */
export function PageFor() {
  const route = useRoute();
  const page = pageOf(route);
  switch (page.page) {
    case 'overview':
      return <OverviewPage key={route} />;
    case 'agents':
      return <AgentsPage key={route} />;
    case 'agent':
      return <AgentPage key={route} agentId={page.agentId} />;
    case 'keys':
      return <ApiKeysPage key={route} agentId={page.agentId} />;
    case 'quotas':
      return <QuotasPage key={route} agentId={page.agentId} />;
    case 'webhooks':
      return <WebhooksPage key={route} agentId={page.agentId} />;
    case 'deliveries':
      return <DeliveriesPage key={route} webhookId={page.webhookId} />;
    case 'playground':
      return <PlaygroundPage key={route} agentId={page.agentId} tool={page.tool} />;
    case 'calls':
      return <CallsPage key={route} query={page.query} />;
    case 'call':
      return <CallPage key={route} callId={page.callId} />;
    case 'channels':
      return <ChannelsPage key={route} query={page.query} />;
    case 'channel':
      return <ChannelPage key={route} channelId={page.channelId} query={page.query} />;
    case 'keys-and-grants':
      return <KeysPage key={route} />;
    case 'audit':
      return <AuditPage key={route} query={page.query} />;
    case 'tool-changes':
      return <ToolChangesPage key={route} query={page.query} />;
    default:
      return <Missing />;
  }
}
