import { useEffect, useState } from 'react';
import { useActivity, type StreamEvent } from '../live';
import { DURATIONS, addCall, rowsOf, type ToolTable } from './tool-figures';

/** The window of the calls-per-second figure. */
const WINDOW_MS = 10_000;
/** Most recent calls listed. */
const RECENT = 8;

interface CallSeen {
  call_id: string | null;
  agent_id: string;
  tool: string;
  caller_id: string;
  outcome: string;
  duration_ms: number;
  at: string;
  seenAt: number;
}

/**
 * The overview's live part, from GET /admin/v1/events (every gateway
 * replica's calls and registrations, over the bus): since the page opened,
 * calls, errors, calls per second over the last 10 s, pods registered, per
 * tool its calls, errors, p50 and p99 (tool-figures.ts), and the latest calls. `onRegistration` lets the page reload what a registration changes.
 */
export function LiveFigures({ onRegistration }: { onRegistration: () => void }) {
  const [calls, setCalls] = useState<CallSeen[]>([]);
  const [totals, setTotals] = useState({ calls: 0, errors: 0, registrations: 0 });
  const [tools, setTools] = useState<ToolTable>(() => new Map());
  const [bursts, setBursts] = useState<{ at: number; calls: number }[]>([]);
  const [now, setNow] = useState(() => Date.now());
  const state = useActivity(({ event, data }: StreamEvent) => {
    if (event === 'call') {
      const call = { ...(data as unknown as CallSeen), seenAt: Date.now() };
      const failed = call.outcome !== 'ok' && call.outcome !== 'replayed';
      setCalls((previous) => [call, ...previous].slice(0, 200));
      setTotals((t) => ({ ...t, calls: t.calls + 1, errors: t.errors + (failed ? 1 : 0) }));
      setTools((table) => addCall(table, { ...call, failed }, call.seenAt));
    } else if (event === 'unlisted') {
      // A busy second on one replica: counted, not listed.
      const unlisted = data as { calls: number; errors: number };
      setTotals((t) => ({ ...t, calls: t.calls + unlisted.calls, errors: t.errors + unlisted.errors }));
      setBursts((previous) => [...previous, { at: Date.now(), calls: unlisted.calls }].slice(-20));
    } else if (event === 'registration') {
      setTotals((t) => ({ ...t, registrations: t.registrations + 1 }));
      onRegistration();
    }
  });
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, []);
  const recent =
    calls.filter((call) => now - call.seenAt <= WINDOW_MS).length +
    bursts.filter((burst) => now - burst.at <= WINDOW_MS).reduce((sum, burst) => sum + burst.calls, 0);
  return (
    <section aria-labelledby="live-heading">
      <h2 id="live-heading">Live</h2>
      <p role="status" className="help" data-live={state}>
        {state === 'live'
          ? 'Live: every gateway’s calls and registrations, as they happen (since this page opened).'
          : state === 'connecting'
            ? 'Connecting to the live updates…'
            : 'Live updates interrupted: reconnecting…'}
      </p>
      <dl className="stats">
        <div className="stat">
          <dt>Calls</dt>
          <dd data-figure="calls">{totals.calls}</dd>
        </div>
        <div className="stat">
          <dt>Errors</dt>
          <dd data-figure="errors">{totals.errors}</dd>
        </div>
        <div className="stat">
          <dt>Calls per second (10 s)</dt>
          <dd data-figure="rate">{(recent / (WINDOW_MS / 1000)).toFixed(1)}</dd>
        </div>
        <div className="stat">
          <dt>Pods registered</dt>
          <dd data-figure="registrations">{totals.registrations}</dd>
        </div>
      </dl>
      <PerTool tools={tools} />
      {calls.length > 0 && (
        <table>
          <caption>Latest calls</caption>
          <thead>
            <tr>
              <th scope="col">Call id</th>
              <th scope="col">Agent</th>
              <th scope="col">Tool</th>
              <th scope="col">Caller</th>
              <th scope="col">Outcome</th>
              <th scope="col">ms</th>
            </tr>
          </thead>
          <tbody>
            {calls.slice(0, RECENT).map((call, i) => (
              <tr key={`${call.call_id ?? ''}-${i}`}>
                <th scope="row">
                  <code>{call.call_id ?? '—'}</code>
                </th>
                <td>{call.agent_id}</td>
                <td>{call.tool}</td>
                <td>{call.caller_id}</td>
                <td data-outcome={call.outcome}>{call.outcome}</td>
                <td>{call.duration_ms}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** Per tool, since this page opened: calls, errors, error rate, p50 and p99 of the duration. */
function PerTool({ tools }: { tools: ToolTable }) {
  const rows = rowsOf(tools);
  return (
    <>
      <h3 id="per-tool-heading">Per tool, since this page opened</h3>
      {rows.length === 0 ? (
        <p className="help">No call has ended since this page opened.</p>
      ) : (
        <table aria-labelledby="per-tool-heading" data-table="per-tool">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Tool</th>
              <th scope="col">Calls</th>
              <th scope="col">Errors</th>
              <th scope="col">Error rate</th>
              <th scope="col">p50 ms</th>
              <th scope="col">p99 ms</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={`${row.agentId}/${row.tool}`} data-tool={row.tool}>
                <td>{row.agentId}</td>
                <th scope="row">{row.tool}</th>
                <td data-figure="tool-calls">{row.calls}</td>
                <td data-figure="tool-errors">{row.errors}</td>
                <td>{((100 * row.errors) / row.calls).toFixed(1)} %</td>
                <td data-figure="p50">{row.p50}</td>
                <td data-figure="p99">{row.p99}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p className="help">
        Percentiles of each tool&rsquo;s last {DURATIONS.toLocaleString('en')} calls seen here; calls a busy gateway
        only counted (more than 100 in a second) are in the totals above, not in this table.
      </p>
    </>
  );
}
