import { client, ok } from '../api';
import { queryOf } from '../calls-api';
import type { ToolChange, ToolDefinition } from '../governance-api';
import { useAction, useApi, useTitle } from '../hooks';
import { href } from '../routes';
import { Loading, Notice, Time } from './common';
import { diffLines, jsonLines, sideBySide, type DiffLine } from './line-diff';

/** The most pending changes asked for at once (the API's maximum). */
const PENDING_SHOWN = 500;

/**
 * Tool definitions held until approved (apps/gateway/src/tool-pinning/README.md):
 * the pending changes of every agent; the one under review (kept in the route,
 * `?agent=&version=`) shown as the approved and the proposed definition side by
 * side, with Approve and Reject.
 */
export function ToolChangesPage({ query }: { query: string }) {
  useTitle('Tool changes');
  const given = new URLSearchParams(query);
  const reviewed = { agent: given.get('agent') ?? '', version: Number(given.get('version') ?? '') };
  const pending = useApi(() => client.GET('/tool-changes', { params: { query: { limit: PENDING_SHOWN } } }), []);
  const [said, act] = useAction(pending.reload);
  const decide = ({ agent_id, version }: ToolChange, decision: 'approve' | 'reject') =>
    decision === 'approve'
      ? act(
          () =>
            ok(
              client.POST('/agents/{agentId}/tool-changes/{version}/approve', {
                params: { path: { agentId: agent_id, version } },
              }),
            ),
          `Version ${version} of ${agent_id} approved: its definitions are served from now on.`,
        )
      : act(
          () =>
            ok(
              client.POST('/agents/{agentId}/tool-changes/{version}/reject', {
                params: { path: { agentId: agent_id, version } },
              }),
            ),
          `Version ${version} of ${agent_id} rejected: the approved definitions stay served.`,
        );

  return (
    <>
      <h1>Tool changes</h1>
      <p className="help">
        A registration that changes an agent&apos;s tool definitions waits here when its policy is <code>hold</code>;
        MCP clients keep the approved definitions until an operator approves.
      </p>
      <Notice {...said} />
      <Loading loaded={pending}>
        {({ items }) => {
          const open = items.find((c) => c.agent_id === reviewed.agent && c.version === reviewed.version);
          return (
            <>
              <PendingTable items={items} open={open} />
              {open ? (
                <Review key={`${open.agent_id} ${open.version}`} change={open} decide={decide} />
              ) : (
                reviewed.agent &&
                !said && (
                  <p>
                    Version {given.get('version')} of {reviewed.agent} is not pending (decided, superseded, or never
                    proposed).
                  </p>
                )
              )}
            </>
          );
        }}
      </Loading>
    </>
  );
}

function PendingTable({ items, open }: { items: ToolChange[]; open?: ToolChange }) {
  if (items.length === 0) return <p>No change waits for approval.</p>;
  const byAgent = [...items].sort((a, b) => a.agent_id.localeCompare(b.agent_id) || a.version - b.version);
  return (
    <table>
      <caption>
        Pending changes ({items.length === PENDING_SHOWN ? `the newest ${PENDING_SHOWN}` : items.length}), by agent
      </caption>
      <thead>
        <tr>
          <th scope="col">Agent</th>
          <th scope="col">Version</th>
          <th scope="col">Proposed</th>
          <th scope="col">Tools</th>
          <th scope="col">Review</th>
        </tr>
      </thead>
      <tbody>
        {byAgent.map((change) => {
          const what = `version ${change.version} of ${change.agent_id}`;
          return (
            <tr key={`${change.agent_id} ${change.version}`}>
              <th scope="row">
                <a href={href('agents', change.agent_id)}>{change.agent_id}</a>
              </th>
              <td>{change.version}</td>
              <td>
                <Time at={change.created_at} />
              </td>
              <td>{change.diff.map((tool) => `${tool.tool} (${tool.kind})`).join(', ')}</td>
              <td>
                <a
                  href={`#/tool-changes${queryOf({ agent: change.agent_id, version: String(change.version) })}`}
                  aria-current={change === open ? 'true' : undefined}
                >
                  Review<span className="visually-hidden"> {what}</span>
                </a>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** One change: each tool's approved and proposed definition side by side, then the decision. */
function Review({ change, decide }: { change: ToolChange; decide: (c: ToolChange, d: 'approve' | 'reject') => void }) {
  const what = `version ${change.version} of ${change.agent_id}`;
  return (
    <section aria-labelledby="review" className="review">
      <h2 id="review">
        Version {change.version} of {change.agent_id}
      </h2>
      <p>
        Proposed <Time at={change.created_at} />. The left side is what MCP clients are served now, the right what the
        agent registered.
      </p>
      {change.diff.map((tool) => {
        const before = change.approved_before.find((d) => d.name === tool.tool);
        const after = change.proposed.find((d) => d.name === tool.tool);
        return (
          <section key={tool.tool} aria-labelledby={`tool-${tool.tool}`} className="tool">
            <h3 id={`tool-${tool.tool}`}>
              Tool {tool.tool} ({tool.kind === 'new' ? 'new' : 'changed'})
            </h3>
            <p>
              Changed:{' '}
              {tool.changes.map((c) => (
                <code key={c.path}>{c.path || '/'} </code>
              ))}
            </p>
            <SideBySide
              caption={`Description of ${tool.tool}`}
              before={before?.description?.split('\n') ?? []}
              after={after?.description?.split('\n') ?? []}
            />
            <SideBySide
              caption={`Input schema of ${tool.tool}`}
              before={jsonLines(before?.input_schema)}
              after={jsonLines(after?.input_schema)}
            />
            {(hasOther(before) || hasOther(after)) && (
              <SideBySide
                caption={`Other fields of ${tool.tool}`}
                before={jsonLines(others(before))}
                after={jsonLines(others(after))}
              />
            )}
          </section>
        );
      })}
      <p className="actions">
        <button type="button" onClick={() => decide(change, 'approve')}>
          Approve<span className="visually-hidden"> {what}</span>
        </button>
        <button type="button" className="danger" onClick={() => decide(change, 'reject')}>
          Reject<span className="visually-hidden"> {what}</span>
        </button>
      </p>
    </section>
  );
}

/** Two texts as a table, a line a row: the approved on the left, the proposed on the right, removed and added lines marked. */
function SideBySide({ caption, before, after }: { caption: string; before: string[]; after: string[] }) {
  const rows = sideBySide(diffLines(before, after));
  return (
    <table className="diff">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Approved (served now)</th>
          <th scope="col">Proposed</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 && (
          <tr>
            <td colSpan={2}>(none on either side)</td>
          </tr>
        )}
        {rows.map((row, index) => (
          <tr key={index}>
            <DiffCell line={row.left} side="approved" />
            <DiffCell line={row.right} side="proposed" />
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A line of one side: removed lines in `del`, added ones in `ins`, each also said in words (not colour alone). */
function DiffCell({ line, side }: { line?: DiffLine; side: 'approved' | 'proposed' }) {
  if (!line) return <td className="gap" data-side={side} />;
  const text = <code>{line.text}</code>;
  return (
    <td data-side={side} data-line={line.kind}>
      {line.kind === 'removed' && (
        <del>
          <span className="visually-hidden">removed: </span>
          {text}
        </del>
      )}
      {line.kind === 'added' && (
        <ins>
          <span className="visually-hidden">added: </span>
          {text}
        </ins>
      )}
      {line.kind === 'same' && text}
    </td>
  );
}

const SHOWN = new Set(['name', 'description', 'input_schema']);
const others = (definition?: ToolDefinition) =>
  definition && Object.fromEntries(Object.entries(definition).filter(([key]) => !SHOWN.has(key)));
const hasOther = (definition?: ToolDefinition) => Object.keys(others(definition) ?? {}).length > 0;
