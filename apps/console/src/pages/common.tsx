import type { ReactNode } from 'react';
import type { Loaded } from '../hooks';
import { href } from '../routes';

/** Loading, the refusal, or the content once the answer is in. */
export function Loading<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ReactNode }) {
  if (loaded.error) {
    return (
      <p role="alert" className="error">
        {loaded.error}
      </p>
    );
  }
  if (loaded.data === undefined) return <p aria-live="polite">Loading…</p>;
  return <>{children(loaded.data)}</>;
}

/** A timestamp, readable, with the ISO form for machines. */
export function Time({ at }: { at: string | null }) {
  if (!at) return <>—</>;
  return <time dateTime={at}>{new Date(at).toLocaleString()}</time>;
}

/** The sub-pages of one agent. */
export function AgentTabs({
  agentId,
  current,
}: {
  agentId: string;
  current: 'agent' | 'keys' | 'quotas' | 'webhooks';
}) {
  const tabs = [
    ['agent', 'Tools', href('agents', agentId)],
    ['keys', 'API keys', href('agents', agentId, 'keys')],
    ['quotas', 'Quotas', href('agents', agentId, 'quotas')],
    ['webhooks', 'Webhooks', `#/webhooks?agent=${encodeURIComponent(agentId)}`],
  ] as const;
  return (
    <nav aria-label={`Agent ${agentId}`} className="tabs">
      <ul>
        {tabs.map(([name, label, link]) => (
          <li key={name}>
            <a href={link} aria-current={name === current ? 'page' : undefined}>
              {label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** A message after an action (role=status, read out by screen readers). */
export function Notice({ text, error }: { text?: string; error?: boolean }) {
  return (
    <p role={error ? 'alert' : 'status'} className={error ? 'error' : 'notice'}>
      {text ?? ''}
    </p>
  );
}

/**
 * A list answer of the API as a table: a caption, column headers, one row per
 * item (its first cell a row header, `th scope="row"`), or a message when empty.
 */
export function ListTable<T>({
  loaded,
  caption,
  columns,
  empty,
  row,
}: {
  loaded: Loaded<{ items: T[] }>;
  caption: string;
  columns: string[];
  empty: ReactNode;
  row: (item: T) => ReactNode;
}) {
  return (
    <Loading loaded={loaded}>
      {({ items }) =>
        items.length === 0 ? (
          <p>{empty}</p>
        ) : (
          <table>
            <caption>{caption}</caption>
            <thead>
              <tr>
                {columns.map((column) => (
                  <th scope="col" key={column}>
                    {column}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>{items.map(row)}</tbody>
          </table>
        )
      }
    </Loading>
  );
}

/** A button acting on one row; its accessible name says which (`Revoke key …`), its text stays short. */
export function RowAction({
  label,
  what,
  onClick,
  danger,
}: {
  label: string;
  what: string;
  onClick: () => void;
  danger?: boolean;
}) {
  return (
    <button type="button" className={danger ? 'danger' : undefined} onClick={onClick}>
      {label}
      <span className="visually-hidden"> {what}</span>
    </button>
  );
}
