import type { ReactNode } from 'react';
import type { CallOutcome, StoredEnvelope, Timings } from '../calls-api';
import { Time } from './common';

/*
 * What the calls and channels pages show alike: how a call ended, the time of
 * each hop (three clocks: the gateway's, the database's, the agent's), and a
 * stored envelope.
 */

const OUTCOME_LABELS: Record<CallOutcome, string> = {
  ok: 'ok',
  tool_error: 'tool error',
  failed: 'failed',
  no_reply: 'no reply',
};

export function Outcome({ outcome, detail }: { outcome: CallOutcome; detail?: string | null }) {
  return (
    <>
      <span className="outcome" data-outcome={outcome}>
        {OUTCOME_LABELS[outcome]}
      </span>
      {detail && <> ({detail})</>}
    </>
  );
}

/** Milliseconds, or a dash when a side of the hop is missing. */
export function Ms({ ms }: { ms: number | null }) {
  return <>{ms === null ? '—' : `${ms} ms`}</>;
}

/** A heading of a level chosen by the page (a call page shows one call, or several under their own headings). */
export function Heading({ level, id, children }: { level: 2 | 3 | 4; id?: string; children: ReactNode }) {
  const Tag = `h${level}` as const;
  return <Tag id={id}>{children}</Tag>;
}

/** The hops of one call, each with its share of the total (a native meter: no inline style). */
export function Hops({ timings, of }: { timings: Timings; of: string }) {
  const hops: [string, number | null, string | null][] = [
    ['Gateway → message service (stored)', timings.hops_ms.gateway_to_message_service, timings.stored_at],
    ['Stored → agent replied', timings.hops_ms.message_service_to_agent_reply, timings.replied_at],
    ['Agent reply → stored', timings.hops_ms.agent_reply_to_stored, timings.reply_stored_at],
  ];
  const total = timings.total_ms;
  return (
    <table className="hops">
      <caption>
        Hops of {of}, posted <Time at={timings.posted_at} /> (clocks: gateway, database, agent)
      </caption>
      <thead>
        <tr>
          <th scope="col">Hop</th>
          <th scope="col">Duration</th>
          <th scope="col">Reached</th>
          <th scope="col">Share of the total</th>
        </tr>
      </thead>
      <tbody>
        {hops.map(([name, ms, at]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td data-hop-ms={ms ?? ''}>
              <Ms ms={ms} />
            </td>
            <td>
              <Time at={at} />
            </td>
            <td>
              {ms !== null && total ? (
                <meter min={0} max={total} value={Math.max(0, ms)} aria-label={`${name}: ${ms} of ${total} ms`} />
              ) : (
                '—'
              )}
            </td>
          </tr>
        ))}
        <tr>
          <th scope="row">Total</th>
          <td data-hop-ms={total ?? ''}>
            <Ms ms={total} />
          </td>
          <td colSpan={2} />
        </tr>
      </tbody>
    </table>
  );
}

/** A stored envelope: who sent it and when it was stored, and the envelope itself (secrets cut out by the API). */
export function Envelope({
  stored,
  level,
  open,
  of,
}: {
  stored: StoredEnvelope;
  level: 2 | 3 | 4;
  open?: boolean;
  of: string;
}) {
  const type = stored.envelope.type;
  return (
    <section className="envelope" data-type={type} aria-label={`${type} of ${of}`}>
      <Heading level={level}>{type}</Heading>
      <dl className="facts">
        <dt>Message</dt>
        <dd>
          <code>{stored.envelope.id}</code> (seq {stored.seq})
        </dd>
        <dt>Sent by</dt>
        <dd>{stored.sender ?? '—'}</dd>
        <dt>Stored</dt>
        <dd>
          <Time at={stored.stored_at} />
        </dd>
      </dl>
      <details open={open}>
        <summary>
          Envelope of the {type} of {of}
        </summary>
        <pre tabIndex={0} aria-label={`${type} envelope of ${of}`}>
          {JSON.stringify(stored.envelope, null, 2)}
        </pre>
      </details>
    </section>
  );
}
