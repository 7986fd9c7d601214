import type { FormEvent } from 'react';
import { client, filled } from '../api';
import { CALL_OUTCOMES, queryOf, type CallDetail, type CallOutcome } from '../calls-api';
import { useApi, useTitle } from '../hooks';
import { href } from '../routes';
import { ListTable, Loading, Time } from './common';
import { Envelope, Heading, Hops, Ms, Outcome } from './conversation';

const FILTERS = ['agent_id', 'tool', 'caller_id', 'outcome'] as const;

/** Recent tool calls, newest first, filtered by agent, tool, caller and outcome (kept in the route: a link to share). */
export function CallsPage({ query }: { query: string }) {
  useTitle('Calls');
  const given = new URLSearchParams(query);
  const filters = Object.fromEntries(FILTERS.map((name) => [name, given.get(name) ?? ''])) as Record<
    (typeof FILTERS)[number],
    string
  >;
  const before = given.get('before') ?? '';
  const { agent_id, tool, caller_id, outcome } = filters;
  // An outcome the route names but the document does not is the API's to refuse (400, shown).
  const asked = filled({ agent_id, tool, caller_id, outcome: outcome as CallOutcome, before });
  const calls = useApi(() => client.GET('/calls', { params: { query: asked } }), [JSON.stringify(asked)]);
  const agents = useApi(() => client.GET('/agents'), []);

  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const chosen = Object.fromEntries(FILTERS.map((name) => [name, String(form.get(name) ?? '').trim()]));
    window.location.hash = `#/calls${queryOf(chosen)}`;
  };

  return (
    <>
      <h1>Calls</h1>
      <form className="filters" onSubmit={apply} aria-label="Filter calls">
        <p>
          <label htmlFor="calls-agent">Agent</label>
          <select id="calls-agent" name="agent_id" defaultValue={filters.agent_id}>
            <option value="">any</option>
            {(agents.data?.items ?? []).map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.id}
              </option>
            ))}
            {filters.agent_id && !agents.data?.items.some((agent) => agent.id === filters.agent_id) && (
              <option value={filters.agent_id}>{filters.agent_id}</option>
            )}
          </select>
        </p>
        <p>
          <label htmlFor="calls-tool">Tool</label>
          <input id="calls-tool" name="tool" defaultValue={filters.tool} maxLength={128} />
        </p>
        <p>
          <label htmlFor="calls-caller">Caller</label>
          <input
            id="calls-caller"
            name="caller_id"
            defaultValue={filters.caller_id}
            maxLength={200}
            placeholder="apikey:…"
          />
        </p>
        <p>
          <label htmlFor="calls-outcome">Outcome</label>
          <select id="calls-outcome" name="outcome" defaultValue={filters.outcome}>
            <option value="">any</option>
            {CALL_OUTCOMES.map((outcome) => (
              <option key={outcome} value={outcome}>
                {outcome}
              </option>
            ))}
          </select>
        </p>
        <p className="actions">
          <button type="submit">Filter calls</button> <a href="#/calls">Clear</a>
        </p>
      </form>
      <ListTable
        loaded={calls}
        caption={before ? 'Older calls, most recent first' : 'Most recent first'}
        columns={['Call', 'Started', 'Agent', 'Tool', 'Caller', 'Outcome', 'Duration', 'Channel', 'Trace id']}
        empty="No call matches (the message service keeps calls as long as its retention says)."
        row={(call) => (
          <tr key={`${call.call_id} ${call.message_id}`}>
            <th scope="row">
              <a href={href('calls', call.call_id)}>
                <code>{call.call_id}</code>
              </a>
            </th>
            <td>
              <Time at={call.started_at} />
            </td>
            <td>{call.agent_id}</td>
            <td>{call.tool}</td>
            <td>{call.caller_id}</td>
            <td>
              <Outcome outcome={call.outcome} />
            </td>
            <td>
              <Ms ms={call.duration_ms} />
            </td>
            <td>
              <a href={href('channels', call.channel_id)}>
                channel<span className="visually-hidden"> of call {call.call_id}</span>
              </a>
            </td>
            <td>
              {call.trace_id ? (
                <code className="trace-short" title={call.trace_id}>
                  {call.trace_id.slice(0, 8)}…
                </code>
              ) : (
                '—'
              )}
            </td>
          </tr>
        )}
      />
      <Pager
        next={calls.data?.next_before ? `#/calls${queryOf({ ...filters, before: calls.data.next_before })}` : undefined}
        newest={before ? `#/calls${queryOf(filters)}` : undefined}
        what="calls"
      />
    </>
  );
}

/** Links to the older page, and back to the newest. */
export function Pager({ next, newest, what }: { next?: string; newest?: string; what: string }) {
  if (!next && !newest) return null;
  return (
    <nav aria-label={`Pages of ${what}`} className="pager">
      {newest && <a href={newest}>Newest {what}</a>}
      {next && <a href={next}>Older {what}</a>}
    </nav>
  );
}

/** One call: both its messages with their envelopes, each hop's time, its trace id and idempotency record. */
export function CallPage({ callId }: { callId: string }) {
  useTitle(`Call ${callId}`);
  const found = useApi(() => client.GET('/calls/{callId}', { params: { path: { callId } } }), [callId]);
  return (
    <>
      <h1>Call {callId}</h1>
      <p>
        <a href="#/calls">All calls</a>
      </p>
      <Loading loaded={found}>
        {({ calls }) =>
          calls.length === 1 ? (
            <CallView call={calls[0]} level={2} />
          ) : (
            <>
              <p>A caller&apos;s own call id: {calls.length} calls named it, newest first.</p>
              {calls.map((call) => (
                <section key={call.message_id} aria-labelledby={`call-${call.message_id}`}>
                  <Heading level={2} id={`call-${call.message_id}`}>
                    Message {call.message_id}
                  </Heading>
                  <CallView call={call} level={3} />
                </section>
              ))}
            </>
          )
        }
      </Loading>
    </>
  );
}

function CallView({ call, level }: { call: CallDetail; level: 2 | 3 }) {
  const of = `call ${call.call_id}`;
  const record = call.idempotency;
  return (
    <>
      <dl className="facts">
        <dt>Agent</dt>
        <dd>
          <a href={href('agents', call.agent_id)}>{call.agent_id}</a>
        </dd>
        <dt>Tool</dt>
        <dd>{call.tool}</dd>
        <dt>Caller</dt>
        <dd>{call.caller_id}</dd>
        <dt>Outcome</dt>
        <dd>
          <Outcome outcome={call.outcome} detail={call.outcome_detail} />
          {call.pod_id && <> · answered by pod {call.pod_id}</>}
        </dd>
        <dt>Started</dt>
        <dd>
          <Time at={call.started_at} />
        </dd>
        <dt>Duration</dt>
        <dd>
          <Ms ms={call.duration_ms} />
        </dd>
        <dt>Trace id</dt>
        <dd>{call.trace_id ? <code className="trace">{call.trace_id}</code> : 'none (tracing was off)'}</dd>
        <dt>Channel</dt>
        <dd>
          <a href={href('channels', call.channel_id)}>
            <code>{call.channel_id}</code>
          </a>
        </dd>
        <dt>Idempotency</dt>
        <dd>
          {record
            ? `key ${JSON.stringify(record.key)}, expires ${new Date(record.expires_at).toLocaleString()}` +
              (record.replays_stored_result ? ', retries replay the stored result' : ', not completed')
            : 'no key (or its record has expired)'}
        </dd>
      </dl>
      <Heading level={level}>Hops</Heading>
      <Hops timings={call.timings} of={of} />
      <Heading level={level}>Messages</Heading>
      <div className="messages">
        <Envelope stored={call.message} level={(level + 1) as 3 | 4} open of={of} />
        {call.reply ? (
          <Envelope stored={call.reply} level={(level + 1) as 3 | 4} open of={of} />
        ) : (
          <p>No reply stored: the call is still running, or the gateway stopped waiting.</p>
        )}
      </div>
    </>
  );
}
