import { useState } from 'react';
import { api, seg, type Delivery, type List, type Webhook } from '../api';
import { useApi, useTitle } from '../hooks';
import { href } from '../routes';
import { AgentTabs, Loading, Notice, Time } from './common';

type Said = { text: string; error?: boolean } | undefined;

/** Run a change, then say how it went and reload the list. */
function useAction(reload: () => void): [Said, (run: () => Promise<unknown>, done: string) => Promise<void>] {
  const [said, setSaid] = useState<Said>();
  const act = async (run: () => Promise<unknown>, done: string) => {
    try {
      await run();
      setSaid({ text: done });
      reload();
    } catch (error) {
      setSaid({ text: (error as Error).message, error: true });
    }
  };
  return [said, act];
}

/** Webhooks of every agent (or one), never with their secrets; a disabled one can be enabled again. */
export function WebhooksPage({ agentId }: { agentId?: string }) {
  useTitle(agentId ? `Webhooks of ${agentId}` : 'Webhooks');
  const hooks = useApi<List<Webhook>>(agentId ? `/webhooks?agent_id=${encodeURIComponent(agentId)}` : '/webhooks');
  const [said, act] = useAction(hooks.reload);
  const enable = (hook: Webhook) =>
    act(() => api('POST', `/webhooks/${seg(hook.id)}/enable`), `Webhook ${hook.id} enabled again.`);
  return (
    <>
      <h1>{agentId ? `Webhooks of ${agentId}` : 'Webhooks'}</h1>
      {agentId && <AgentTabs agentId={agentId} current="webhooks" />}
      <Notice {...said} />
      <Loading loaded={hooks}>
        {({ items }) =>
          items.length === 0 ? (
            <p>No webhook: npm run admin -- webhook add --agent A --url U --events E</p>
          ) : (
            <table>
              <caption>Webhooks, with their state</caption>
              <thead>
                <tr>
                  <th scope="col">Webhook</th>
                  <th scope="col">Agent</th>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">State</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {items.map((hook) => (
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
                    <td>
                      {hook.disabled_at
                        ? `disabled (${hook.disabled_reason ?? 'no reason'})`
                        : hook.failing_since
                          ? `failing: ${hook.last_error ?? ''}`
                          : 'active'}
                    </td>
                    <td>
                      {hook.disabled_at && (
                        <button type="button" onClick={() => enable(hook)}>
                          Enable<span className="visually-hidden"> webhook {hook.id}</span>
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loading>
    </>
  );
}

/** A webhook's recent deliveries; any of them can be sent again (same webhook-id, fresh attempts). */
export function DeliveriesPage({ webhookId }: { webhookId: string }) {
  useTitle(`Deliveries of ${webhookId}`);
  const deliveries = useApi<List<Delivery>>(`/webhooks/${seg(webhookId)}/deliveries`);
  const [said, act] = useAction(deliveries.reload);
  const redeliver = (delivery: Delivery) =>
    act(
      () => api('POST', `/webhook-deliveries/${seg(delivery.id)}/redeliver`),
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
      <Loading loaded={deliveries}>
        {({ items }) =>
          items.length === 0 ? (
            <p>No delivery yet.</p>
          ) : (
            <table>
              <caption>Most recent first</caption>
              <thead>
                <tr>
                  <th scope="col">Delivery</th>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Created</th>
                  <th scope="col">Finished</th>
                  <th scope="col">Last error</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {items.map((delivery) => (
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
                      <button type="button" onClick={() => redeliver(delivery)}>
                        Redeliver<span className="visually-hidden"> delivery {delivery.id}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loading>
    </>
  );
}
