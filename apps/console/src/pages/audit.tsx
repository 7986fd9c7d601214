import { Fragment, useState, type FormEvent } from 'react';
import { client, filled } from '../api';
import { queryOf } from '../calls-api';
import { AUDIT_KINDS, type AuditKind, type AuditRecord } from '../governance-api';
import { useApi, useTitle } from '../hooks';
import { href } from '../routes';
import { Pager } from './calls';
import { ListTable, Time } from './common';
import { Ms } from './conversation';

/** The API's filters (docs/admin-openapi.yaml, listAudit), as they stand in the route. */
const FILTERS = ['kind', 'caller', 'agent', 'tool', 'outcome', 'since', 'until'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

const COLUMNS = ['Time', 'Kind', 'Surface', 'Principal', 'Agent', 'Tool', 'Call', 'Outcome', 'Duration', 'Replayed'];

/** The audit trail, newest first, filtered (kept in the route: a link to share), older pages by the API's cursor. */
export function AuditPage({ query }: { query: string }) {
  useTitle('Audit trail');
  const given = new URLSearchParams(query);
  const filters = Object.fromEntries(FILTERS.map((name) => [name, given.get(name) ?? ''])) as Filters;
  const before = given.get('before') ?? '';
  const { kind, caller, agent, tool, outcome, since, until } = filters;
  // A kind the route names but the document does not is the API's to refuse (400, shown).
  const asked = filled({ kind: kind as AuditKind, caller, agent, tool, outcome, since, until, before });
  const trail = useApi(() => client.GET('/audit', { params: { query: asked } }), [JSON.stringify(asked)]);
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) =>
    setOpen((previous) => {
      const next = new Set(previous);
      if (!next.delete(id)) next.add(id);
      return next;
    });

  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const chosen = Object.fromEntries(FILTERS.map((name) => [name, String(form.get(name) ?? '').trim()]));
    window.location.hash = `#/audit${queryOf(chosen)}`;
  };

  return (
    <>
      <h1>Audit trail</h1>
      <p className="help">
        Every tool call, admin action, refused credential and tool-definition decision, chained by hash (verify with{' '}
        <code>npm run admin -- audit verify</code>).
      </p>
      <form className="filters" onSubmit={apply} aria-label="Filter the audit trail">
        <p>
          <label htmlFor="audit-kind">Kind</label>
          <select id="audit-kind" name="kind" defaultValue={filters.kind}>
            <option value="">any</option>
            {AUDIT_KINDS.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </p>
        <TextFilter id="audit-caller" name="caller" label="Principal" value={filters.caller} hint="apikey:…" />
        <TextFilter id="audit-agent" name="agent" label="Agent" value={filters.agent} />
        <TextFilter id="audit-tool" name="tool" label="Tool" value={filters.tool} />
        <TextFilter id="audit-outcome" name="outcome" label="Outcome" value={filters.outcome} hint="ok, tool_error…" />
        <TextFilter id="audit-since" name="since" label="Since" value={filters.since} hint="7d, 12h, ISO 8601" />
        <TextFilter id="audit-until" name="until" label="Until" value={filters.until} hint="30m, ISO 8601" />
        <p className="actions">
          <button type="submit">Filter the trail</button> <a href="#/audit">Clear</a>
        </p>
      </form>
      <ListTable
        loaded={trail}
        caption={before ? 'Older records, most recent first' : 'Most recent first'}
        columns={[...COLUMNS, 'Record']}
        empty="No record matches (the trail keeps AUDIT_RETENTION_DAYS days)."
        row={(record) => {
          const id = `${record.chain}/${record.seq}`;
          return (
            <Fragment key={id}>
              <AuditRow record={record} open={open.has(id)} onToggle={() => toggle(id)} />
              {open.has(id) && (
                <tr className="audit-detail">
                  <td colSpan={COLUMNS.length + 1}>
                    <AuditDetail record={record} />
                  </td>
                </tr>
              )}
            </Fragment>
          );
        }}
      />
      <Pager
        next={trail.data?.next ? `#/audit${queryOf({ ...filters, before: trail.data.next })}` : undefined}
        newest={before ? `#/audit${queryOf(filters)}` : undefined}
        what="records"
      />
    </>
  );
}

function TextFilter({
  id,
  name,
  label,
  value,
  hint,
}: {
  id: string;
  name: string;
  label: string;
  value: string;
  hint?: string;
}) {
  return (
    <p>
      <label htmlFor={id}>{label}</label>
      <input id={id} name={name} defaultValue={value} maxLength={200} placeholder={hint} />
    </p>
  );
}

function AuditRow({ record, open, onToggle }: { record: AuditRecord; open: boolean; onToggle: () => void }) {
  const id = `${record.chain}/${record.seq}`;
  return (
    <tr data-audit-kind={record.kind}>
      <th scope="row">
        <Time at={record.at} />
      </th>
      <td>{record.kind}</td>
      <Cell value={record.surface} />
      <Cell value={record.principal} />
      <td>{record.agent_id ? <a href={href('agents', record.agent_id)}>{record.agent_id}</a> : '—'}</td>
      <Cell value={record.tool} />
      <td>
        {record.call_id ? (
          <a href={href('calls', record.call_id)}>
            <code className="hash">{record.call_id}</code>
          </a>
        ) : (
          '—'
        )}
      </td>
      <td data-outcome={record.outcome ?? ''}>
        {record.outcome ?? '—'}
        {record.error_code && record.error_code !== record.outcome && <> ({record.error_code})</>}
      </td>
      <td>
        <Ms ms={record.duration_ms} />
      </td>
      <td>{record.replayed === null ? '—' : record.replayed ? 'yes' : 'no'}</td>
      <td>
        <button type="button" aria-expanded={open} onClick={onToggle}>
          {open ? 'Hide' : 'Show'}
          <span className="visually-hidden"> record {id}</span>
        </button>
      </td>
    </tr>
  );
}

const Cell = ({ value }: { value: string | null }) => <td>{value ?? '—'}</td>;

/** What a row does not show: where it sits in its hash chain, the arguments' digest, the detail. */
function AuditDetail({ record }: { record: AuditRecord }) {
  const id = `${record.chain}/${record.seq}`;
  return (
    <dl className="facts">
      <dt>Chain</dt>
      <dd>
        <code>{record.chain}</code>, record {record.seq}
      </dd>
      <dt>Hash</dt>
      <dd>
        <code className="hash">{record.hash}</code>
      </dd>
      <dt>Previous hash</dt>
      <dd>
        <code className="hash">{record.prev_hash}</code>
      </dd>
      <dt>Pod</dt>
      <dd>{record.pod_id ?? '—'}</dd>
      <dt>Arguments digest</dt>
      <dd>{record.arguments_digest ? <code className="hash">{record.arguments_digest}</code> : '—'}</dd>
      {record.arguments !== undefined && record.arguments !== null && (
        <>
          <dt>Arguments</dt>
          <dd>
            <pre tabIndex={0} aria-label={`Arguments of record ${id}`}>
              {JSON.stringify(record.arguments, null, 2)}
            </pre>
          </dd>
        </>
      )}
      <dt>Detail</dt>
      <dd>
        {record.detail ? (
          <pre tabIndex={0} aria-label={`Detail of record ${id}`}>
            {JSON.stringify(record.detail, null, 2)}
          </pre>
        ) : (
          '—'
        )}
      </dd>
    </dl>
  );
}
