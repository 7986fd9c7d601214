import { href } from '../routes';

/** One playground call as it goes: what the event stream said so far. */
export interface Run {
  state: 'running' | 'done' | 'cancelled';
  callId?: string;
  progress?: { progress: number; total?: number; message?: string };
  logs: string[];
  result?: {
    call_id: string;
    channel_id: string;
    is_error: boolean;
    content: { type: string; text?: string }[];
    structured_content?: object;
  };
  failure?: string;
}

/**
 * The call's id, its progress, its log lines, and its result (a tool error shown as such) or failure.
 * Once the result is in, the call id links to the call's page and the channel id to its conversation
 * (before that, the call is not yet stored: the link would find nothing).
 */
export function RunView({ run }: { run: Run }) {
  const { progress, result } = run;
  return (
    <section aria-labelledby="run-heading" className="run">
      <h2 id="run-heading">Call</h2>
      <p role="status" className="notice">
        {run.state === 'running' ? 'Running…' : run.state === 'cancelled' ? 'Cancelled.' : 'Finished.'}
      </p>
      <dl className="facts">
        <dt>Call id</dt>
        <dd>
          {run.callId && run.state === 'done' && result ? (
            <a href={href('calls', run.callId)}>
              <code data-call-id={run.callId}>{run.callId}</code>
            </a>
          ) : (
            <code data-call-id={run.callId ?? ''}>{run.callId ?? '—'}</code>
          )}
        </dd>
        {result && (
          <>
            <dt>Channel</dt>
            <dd>
              <a href={href('channels', result.channel_id)}>
                <code data-channel-id={result.channel_id}>{result.channel_id}</code>
              </a>
            </dd>
          </>
        )}
      </dl>
      {progress && (
        <div className="progress">
          <label htmlFor="call-progress">Progress</label>
          <progress id="call-progress" value={progress.progress} max={progress.total ?? undefined}>
            {progress.progress}
          </progress>
          <p aria-live="polite" data-progress={progress.progress}>
            {progress.message ?? `${progress.progress}${progress.total ? ` of ${progress.total}` : ''}`}
          </p>
        </div>
      )}
      {run.logs.length > 0 && (
        <details>
          <summary>Log ({run.logs.length})</summary>
          <ul className="log">
            {run.logs.map((line, i) => (
              <li key={i}>{line}</li>
            ))}
          </ul>
        </details>
      )}
      {result && (
        <div className={result.is_error ? 'result tool-error' : 'result'}>
          <h3>{result.is_error ? 'Result: the tool reported an error' : 'Result'}</h3>
          {result.content.map((item, i) =>
            item.type === 'text' ? (
              <pre key={i} className="content-text">
                {item.text}
              </pre>
            ) : (
              <pre key={i} className="content-other">
                {JSON.stringify(item, null, 2)}
              </pre>
            ),
          )}
          {result.structured_content && (
            <details>
              <summary>Structured content</summary>
              <pre>{JSON.stringify(result.structured_content, null, 2)}</pre>
            </details>
          )}
        </div>
      )}
      {run.failure && (
        <p role="alert" className="error">
          The call failed: {run.failure}
        </p>
      )}
    </section>
  );
}
