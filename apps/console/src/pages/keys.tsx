import { useState, type FormEvent } from 'react';
import { client, ok, type Pat } from '../api';
import { useApi, useTitle } from '../hooks';
import { ListTable, Notice, RowAction, Time } from './common';
import { ShownOnce } from './shown-once';

/**
 * Keys and grants: personal access tokens (create, shown once; list; revoke)
 * and task-scoped RuntimeGrants (mint, shown once; revoke by id). A new secret
 * lives in this page's state only (the server keeps a digest, or nothing).
 * Agents' own API keys are on each agent's page.
 */
export function KeysPage() {
  useTitle('Keys and grants');
  const pats = useApi(() => client.GET('/pats'), []);
  const [secret, setSecret] = useState<{ id: string; title: string; label: string; value: string }>();
  const [notice, setNotice] = useState<{ text: string; error?: boolean }>();
  const act = async (action: () => Promise<void>) => {
    try {
      await action();
    } catch (error) {
      setNotice({ text: (error as Error).message, error: true });
    }
  };

  const createPat = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const field = event.currentTarget.elements.namedItem('label') as HTMLInputElement;
    const label = field.value.trim();
    void act(async () => {
      const created = await ok(client.POST('/pats', { body: label ? { label } : {} }));
      field.value = '';
      setNotice(undefined);
      setSecret({
        id: 'new-pat',
        title: `New token ${created.id}`,
        label: 'Personal access token',
        value: created.token,
      });
      pats.reload();
    });
  };
  const revokePat = (pat: Pat) =>
    act(async () => {
      await ok(client.POST('/pats/{patId}/revoke', { params: { path: { patId: pat.id } } }));
      setNotice({ text: `Token ${pat.id} revoked.` });
      pats.reload();
    });
  const mintGrant = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    const list = (name: string) =>
      value(name)
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
    void act(async () => {
      const minted = await ok(
        client.POST('/grants', {
          body: {
            workspace_id: value('workspace'),
            agent_id: value('agent'),
            task_id: value('task'),
            tools: list('tools'),
            credentials: list('credentials'),
            ttl_seconds: Number(value('ttl') || 3600),
          },
        }),
      );
      setNotice({ text: `Grant ${minted.id} for task ${minted.task_id}, until ${minted.expires_at}.` });
      setSecret({
        id: 'new-grant',
        title: `New grant ${minted.id}`,
        label: 'RuntimeGrant (Authorization: Bearer)',
        value: minted.grant,
      });
    });
  };
  const revokeGrant = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const field = event.currentTarget.elements.namedItem('grant') as HTMLInputElement;
    void act(async () => {
      const revoked = await ok(
        client.POST('/grants/{grantId}/revoke', { params: { path: { grantId: field.value.trim() } } }),
      );
      field.value = '';
      setNotice({ text: `Grant ${revoked.grant_id} revoked on every gateway.` });
    });
  };

  return (
    <>
      <h1>Keys and grants</h1>
      <p>An agent&apos;s API keys are on its page (Agents).</p>
      {secret && <ShownOnce {...secret} what="secret" onHide={() => setSecret(undefined)} />}
      <Notice {...notice} />
      <section aria-labelledby="pats-heading">
        <h2 id="pats-heading">Personal access tokens</h2>
        <form onSubmit={createPat} className="inline">
          <label htmlFor="pat-label">Label (optional)</label>
          <input id="pat-label" name="label" maxLength={200} autoComplete="off" />
          <button type="submit">Create token</button>
        </form>
        <ListTable
          loaded={pats}
          caption="Only their public ids: the tokens themselves are never stored"
          columns={['Token id', 'Label', 'Created', 'Revoked', 'Action']}
          empty="No personal access token yet."
          row={(pat) => (
            <tr key={pat.id}>
              <th scope="row">
                <code>{pat.id}</code>
              </th>
              <td>{pat.label ?? '—'}</td>
              <td>
                <Time at={pat.created_at} />
              </td>
              <td>
                <Time at={pat.revoked_at} />
              </td>
              <td>
                {!pat.revoked_at && (
                  <RowAction label="Revoke" what={`token ${pat.id}`} onClick={() => revokePat(pat)} danger />
                )}
              </td>
            </tr>
          )}
        />
      </section>
      <section aria-labelledby="grant-heading">
        <h2 id="grant-heading">Mint a RuntimeGrant</h2>
        <form onSubmit={mintGrant}>
          {[
            ['workspace', 'Workspace', 'demo'],
            ['agent', 'Agent', 'demo-agent'],
            ['task', 'Task', ''],
            ['tools', 'Tools (comma-separated)', ''],
            ['credentials', 'Credentials (comma-separated, optional)', ''],
            ['ttl', 'Lifetime in seconds (default 3600)', ''],
          ].map(([name, label, placeholder]) => (
            <p key={name}>
              <label htmlFor={`grant-${name}`}>{label}</label>
              <input id={`grant-${name}`} name={name} placeholder={placeholder} autoComplete="off" />
            </p>
          ))}
          <button type="submit">Mint grant</button>
        </form>
        <h2 id="revoke-grant-heading">Revoke a grant</h2>
        <form onSubmit={revokeGrant} className="inline" aria-labelledby="revoke-grant-heading">
          <label htmlFor="grant-id">Grant id</label>
          <input id="grant-id" name="grant" autoComplete="off" required />
          <button type="submit">Revoke grant</button>
        </form>
      </section>
    </>
  );
}
