import { useState, type FormEvent } from 'react';
import { ShownOnce } from './shown-once';
import { client, ok, type ApiKey, type Schemas } from '../api';
import { useApi, useTitle } from '../hooks';
import { AgentTabs, ListTable, Notice, RowAction, Time } from './common';

type Created = Schemas['CreatedApiKey'];

/**
 * An agent's API keys: create (the key is in this component's state only, shown
 * once, gone when the operator hides it or leaves the page: the server keeps a
 * digest and can never show it again), list, revoke.
 */
export function ApiKeysPage({ agentId }: { agentId: string }) {
  useTitle(`API keys of ${agentId}`);
  const keys = useApi(() => client.GET('/agents/{agentId}/api-keys', { params: { path: { agentId } } }), [agentId]);
  const [created, setCreated] = useState<Created>();
  const [notice, setNotice] = useState<{ text: string; error?: boolean }>();

  const create = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const field = event.currentTarget.elements.namedItem('label') as HTMLInputElement;
    const label = field.value.trim();
    try {
      setCreated(
        await ok(
          client.POST('/agents/{agentId}/api-keys', { params: { path: { agentId } }, body: label ? { label } : {} }),
        ),
      );
      field.value = '';
      setNotice(undefined);
      keys.reload();
    } catch (error) {
      setNotice({ text: (error as Error).message, error: true });
    }
  };
  const revoke = async (key: ApiKey) => {
    try {
      await ok(client.POST('/api-keys/{keyId}/revoke', { params: { path: { keyId: key.id } } }));
      setNotice({ text: `Key ${key.id} revoked: calls with it are refused from now on.` });
      if (created?.id === key.id) setCreated(undefined);
      keys.reload();
    } catch (error) {
      setNotice({ text: (error as Error).message, error: true });
    }
  };

  return (
    <>
      <h1>API keys of {agentId}</h1>
      <AgentTabs agentId={agentId} current="keys" />
      <section aria-labelledby="create-heading">
        <h2 id="create-heading">Create a key</h2>
        <form onSubmit={create} className="inline">
          <label htmlFor="key-label">Label (optional)</label>
          <input id="key-label" name="label" maxLength={200} autoComplete="off" />
          <button type="submit">Create key</button>
        </form>
        {created && <NewKey created={created} onHide={() => setCreated(undefined)} />}
      </section>
      <Notice {...notice} />
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">Keys</h2>
        <ListTable
          loaded={keys}
          caption="Only their public ids: the keys themselves are never stored"
          columns={['Key id', 'Label', 'Created', 'Revoked', 'Action']}
          empty="No key yet."
          row={(key) => (
            <tr key={key.id}>
              <th scope="row">
                <code>{key.id}</code>
              </th>
              <td>{key.label ?? '—'}</td>
              <td>
                <Time at={key.created_at} />
              </td>
              <td>
                <Time at={key.revoked_at} />
              </td>
              <td>
                {!key.revoked_at && (
                  <RowAction label="Revoke" what={`key ${key.id}`} onClick={() => revoke(key)} danger />
                )}
              </td>
            </tr>
          )}
        />
      </section>
    </>
  );
}

/** The new key, shown this once, with a copy button. */
function NewKey({ created, onHide }: { created: Created; onHide: () => void }) {
  return (
    <ShownOnce
      id="new-key"
      title={`New key ${created.id}`}
      label="API key (X-Agent-API-Key)"
      what="key"
      value={created.key}
      onHide={onHide}
    />
  );
}
