import { client, ok, type Delivery, type Webhook } from '../api';
import { useAction, useApi, useTitle } from '../hooks';
import { href } from '../routes';
import { AgentTabs, ListTable, Notice, RowAction, Time } from './common';

/** Webhooks of every agent (or one), never with their secrets; a disabled one can be enabled again. */
export function WebhooksPage({ agentId }: { agentId?: string }) {
  useTitle(agentId ? `Webhooks of ${agentId}` : 'Webhooks');
  const hooks = useApi(() => client.GET('/webhooks', { params: { query: { agent_id: agentId } } }), [agentId]);
  const [said, act] = useAction(hooks.reload);
  const enable = (hook: Webhook) =>
    act(
      () => ok(client.POST('/webhooks/{webhookId}/enable', { params: { path: { webhookId: hook.id } } })),
      `Webhook ${hook.id} enabled again.`,
    );
  return (
    <>
      <h1>{agentId ? `Webhooks of ${agentId}` : 'Webhooks'}</h1>
      {agentId && <AgentTabs agentId={agentId} current="webhooks" />}
      <Notice {...said} />
      <ListTable
        loaded={hooks}
        caption="Webhooks, with their state"
        columns={['Webhook', 'Agent', 'URL', 'Events', 'State', 'Action']}
        empty="No webhook: npm run admin -- webhook add --agent A --url U --events E"
        row={(hook) => (
          <tr key={hook.id}>
            <th scope="row">
              <a href={href('webhooks', hook.id, 'deliveries')}>
                <code>{hook.id}</code>
                <span className="visually-hidden"> deliveries</span>
              </a>
            </th>
            <td>{hook.agent_id}</td>
            <td className="url">{hook.url}</td>
            <td>{hook.events.join(', ')}</td>
            <td>{stateOf(hook)}</td>
            <td>
              {hook.disabled_at && (
                <RowAction label="Enable" what={`webhook ${hook.id}`} onClick={() => enable(hook)} />
              )}
            </td>
          </tr>
        )}
      />
    </>
  );
}

/** A webhook's recent deliveries; any of them can be sent again (same webhook-id, fresh attempts). */
export function DeliveriesPage({ webhookId }: { webhookId: string }) {
  useTitle(`Deliveries of ${webhookId}`);
  const deliveries = useApi(
    () => client.GET('/webhooks/{webhookId}/deliveries', { params: { path: { webhookId } } }),
    [webhookId],
  );
  const [said, act] = useAction(deliveries.reload);
  const redeliver = (delivery: Delivery) =>
    act(
      () =>
        ok(
          client.POST('/webhook-deliveries/{deliveryId}/redeliver', { params: { path: { deliveryId: delivery.id } } }),
        ),
      `Delivery ${delivery.id} queued again.`,
    );
  return (
    <>
      <h1>Deliveries of webhook {webhookId}</h1>
      <p>
        <a href="#/webhooks">All webhooks</a> ·{' '}
        <button type="button" onClick={deliveries.reload}>
          Refresh
        </button>
      </p>
      <Notice {...said} />
      <ListTable
        loaded={deliveries}
        caption="Most recent first"
        columns={['Delivery', 'Event', 'Status', 'Attempts', 'Created', 'Finished', 'Last error', 'Action']}
        empty="No delivery yet."
        row={(delivery) => (
          <tr key={delivery.id}>
            <th scope="row">
              <code>{delivery.id}</code>
            </th>
            <td>{delivery.event_type}</td>
            <td data-status={delivery.status}>{delivery.status}</td>
            <td>{delivery.attempts}</td>
            <td>
              <Time at={delivery.created_at} />
            </td>
            <td>
              <Time at={delivery.finished_at} />
            </td>
            <td>{delivery.last_error ?? '—'}</td>
            <td>
              <RowAction label="Redeliver" what={`delivery ${delivery.id}`} onClick={() => redeliver(delivery)} />
            </td>
          </tr>
        )}
      />
    </>
  );
}

function stateOf(hook: Webhook): string {
  if (hook.disabled_at) return `disabled (${hook.disabled_reason ?? 'no reason'})`;
  if (hook.failing_since) return `failing: ${hook.last_error ?? ''}`;
  return 'active';
}
