import { useState, type FormEvent } from 'react';
import { client, ok, QUOTA_LIMITS, type QuotaLimit } from '../api';
import { useApi, useTitle } from '../hooks';
import { AgentTabs, Loading, Notice } from './common';

const LABELS: Record<QuotaLimit, string> = {
  concurrent_calls: 'Calls in flight',
  calls_per_second: 'Calls per second',
  sessions: 'Open sessions',
  streams: 'Open GET streams',
};

/** An agent's quotas per API key: the limits in force, the defaults, and a form to override them. */
export function QuotasPage({ agentId }: { agentId: string }) {
  useTitle(`Quotas of ${agentId}`);
  const quotas = useApi(() => client.GET('/agents/{agentId}/quotas', { params: { path: { agentId } } }), [agentId]);
  const [notice, setNotice] = useState<{ text: string; error?: boolean }>();

  const save = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const body: Partial<Record<QuotaLimit, number | null>> = {};
    for (const name of QUOTA_LIMITS) {
      const value = (form.elements.namedItem(name) as HTMLInputElement).value.trim();
      body[name] = value === '' ? null : Number(value);
    }
    try {
      await ok(client.PATCH('/agents/{agentId}/quotas', { params: { path: { agentId } }, body }));
      setNotice({ text: 'Quotas saved: every gateway applies them within moments.' });
      quotas.reload();
    } catch (error) {
      setNotice({ text: (error as Error).message, error: true });
    }
  };

  return (
    <>
      <h1>Quotas of {agentId}</h1>
      <AgentTabs agentId={agentId} current="quotas" />
      <p className="help">
        Per API key (or grant task). 0 means no limit; leave a field empty to use the gateway&apos;s default.
      </p>
      <Loading loaded={quotas}>
        {(view) => (
          <form onSubmit={save} key={JSON.stringify(view.overrides)}>
            <table>
              <caption>Limits in force</caption>
              <thead>
                <tr>
                  <th scope="col">Limit</th>
                  <th scope="col">In force</th>
                  <th scope="col">Default</th>
                  <th scope="col">Override</th>
                </tr>
              </thead>
              <tbody>
                {QUOTA_LIMITS.map((name) => (
                  <tr key={name}>
                    <th scope="row">{LABELS[name]}</th>
                    <td data-limit={name}>{view.limits[name]}</td>
                    <td>{view.defaults[name]}</td>
                    <td>
                      <label htmlFor={`quota-${name}`} className="visually-hidden">
                        Override of {LABELS[name]}
                      </label>
                      <input
                        id={`quota-${name}`}
                        name={name}
                        type="number"
                        min={0}
                        max={1_000_000}
                        step={1}
                        inputMode="numeric"
                        defaultValue={view.overrides[name] ?? ''}
                        placeholder={`default (${view.defaults[name]})`}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <button type="submit">Save quotas</button>
          </form>
        )}
      </Loading>
      <Notice {...notice} />
    </>
  );
}
