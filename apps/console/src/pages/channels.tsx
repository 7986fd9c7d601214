import type { FormEvent } from 'react';
import { client, filled } from '../api';
import { queryOf, type Turn } from '../calls-api';
import { useApi, useTitle } from '../hooks';
import { href } from '../routes';
import { ListTable, Loading, Time } from './common';
import { Pager } from './calls';
import { Envelope, Hops, Outcome } from './conversation';

/** Channels (conversations), newest first: a call's own, or an MCP session's, shared by its calls. */
export function ChannelsPage({ query }: { query: string }) {
  useTitle('Channels');
  const given = new URLSearchParams(query);
  const agentId = given.get('agent_id') ?? '';
  const before = given.get('before') ?? '';
  const channels = useApi(
    () => client.GET('/channels', { params: { query: filled({ agent_id: agentId, before }) } }),
    [agentId, before],
  );
  const agents = useApi(() => client.GET('/agents'), []);

  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const agent = String(new FormData(event.currentTarget).get('agent_id') ?? '');
    window.location.hash = `#/channels${queryOf({ agent_id: agent })}`;
  };

  return (
    <>
      <h1>Channels</h1>
      <form className="filters" onSubmit={apply} aria-label="Filter channels">
        <p>
          <label htmlFor="channels-agent">Agent</label>
          <select id="channels-agent" name="agent_id" defaultValue={agentId}>
            <option value="">any</option>
            {(agents.data?.items ?? []).map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.id}
              </option>
            ))}
          </select>
        </p>
        <p className="actions">
          <button type="submit">Filter channels</button>
        </p>
      </form>
      <ListTable
        loaded={channels}
        caption={before ? 'Older channels, most recent first' : 'Most recent first'}
        columns={['Channel', 'Agent', 'Caller', 'Messages', 'Created', 'Last message']}
        empty="No channel yet."
        row={(channel) => (
          <tr key={channel.id}>
            <th scope="row">
              <a href={href('channels', channel.id)}>
                <code>{channel.id}</code>
              </a>
            </th>
            <td>{channel.agent_id}</td>
            <td>{channel.caller_id ?? '—'}</td>
            <td>{channel.messages}</td>
            <td>
              <Time at={channel.created_at} />
            </td>
            <td>
              <Time at={channel.last_message_at} />
            </td>
          </tr>
        )}
      />
      <Pager
        next={
          channels.data?.next_before
            ? `#/channels${queryOf({ agent_id: agentId, before: channels.data.next_before })}`
            : undefined
        }
        newest={before ? `#/channels${queryOf({ agent_id: agentId })}` : undefined}
        what="channels"
      />
    </>
  );
}

/** One channel as a conversation: each chat_message with its agent_reply, their envelopes and the hops between. */
export function ChannelPage({ channelId, query }: { channelId: string; query: string }) {
  useTitle(`Channel ${channelId}`);
  const before = new URLSearchParams(query).get('before') ?? '';
  const conversation = useApi(
    () => client.GET('/channels/{channelId}/messages', { params: { path: { channelId }, query: filled({ before }) } }),
    [channelId, before],
  );
  const base = href('channels', channelId);
  return (
    <>
      <h1>Channel {channelId}</h1>
      <p>
        <a href="#/channels">All channels</a>
      </p>
      <Loading loaded={conversation}>
        {({ channel, items, next_before: nextBefore }) => (
          <>
            <dl className="facts">
              <dt>Agent</dt>
              <dd>
                <a href={href('agents', channel.agent_id)}>{channel.agent_id}</a>
              </dd>
              <dt>Caller</dt>
              <dd>{channel.caller_id ?? '—'}</dd>
              <dt>Messages</dt>
              <dd>{channel.messages}</dd>
              <dt>Created</dt>
              <dd>
                <Time at={channel.created_at} />
              </dd>
              <dt>Last message</dt>
              <dd>
                <Time at={channel.last_message_at} />
              </dd>
            </dl>
            <Pager
              next={nextBefore ? `${base}${queryOf({ before: nextBefore })}` : undefined}
              newest={before ? base : undefined}
              what="turns"
            />
            {items.length === 0 ? (
              <p>No message on this channel yet.</p>
            ) : (
              <ol className="conversation" aria-label="Turns, oldest first">
                {items.map((turn) => (
                  <li key={turn.message.envelope.id}>
                    <TurnView turn={turn} />
                  </li>
                ))}
              </ol>
            )}
          </>
        )}
      </Loading>
    </>
  );
}

const KINDS: Record<Turn['kind'], string> = {
  tool_call: 'Tool call',
  resource_read: 'Resource read',
  prompt_get: 'Prompt',
  complete: 'Completion',
  message: 'Message',
};

function TurnView({ turn }: { turn: Turn }) {
  const id = `turn-${turn.message.envelope.id}`;
  const of = turn.call_id ? `call ${turn.call_id}` : `message ${turn.message.envelope.id}`;
  return (
    <article className="turn" aria-labelledby={id}>
      <h2 id={id}>
        {KINDS[turn.kind]} {turn.name}
      </h2>
      <p className="turn-facts">
        {turn.call_id && (
          <>
            <a href={href('calls', turn.call_id)}>
              <code>{turn.call_id}</code>
            </a>{' '}
            ·{' '}
          </>
        )}
        from {turn.caller_id} · <Outcome outcome={turn.outcome} detail={turn.outcome_detail} />
        {turn.pod_id && <> · pod {turn.pod_id}</>} · trace{' '}
        {turn.trace_id ? <code className="trace">{turn.trace_id}</code> : 'none'}
      </p>
      <Hops timings={turn.timings} of={of} />
      <div className="messages">
        <Envelope stored={turn.message} level={3} of={of} />
        {turn.reply ? (
          <Envelope stored={turn.reply} level={3} of={of} />
        ) : (
          <p>No reply stored: still running, or the gateway stopped waiting.</p>
        )}
      </div>
    </article>
  );
}
