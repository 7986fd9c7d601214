import { useRef, useState, type FormEvent } from 'react';
import { client, type Tool } from '../api';
import { useApi, useTitle } from '../hooks';
import { playgroundCall, type StreamEvent } from '../live';
import { href } from '../routes';
import { Loading } from './common';
import { RunView, type Run } from './playground-run';
import { SchemaFields, argumentsOf, fieldsOf, initialValues, type Values } from './schema-form';

/**
 * The playground: pick an agent and one of its tools, fill a form generated
 * from the tool's input schema, run it, and watch its progress and result
 * live (POST /agents/{id}/playground/calls, an event stream). The choice is in
 * the route (#/playground/{agent}/{tool}), so it survives a reload.
 */
export function PlaygroundPage({ agentId, tool }: { agentId?: string; tool?: string }) {
  useTitle(tool ? `Playground: ${tool}` : 'Playground');
  const agents = useApi(() => client.GET('/agents'), []);
  return (
    <>
      <h1>Playground</h1>
      <p className="help">
        Calls a tool through the gateway&apos;s own call path, as caller <code>admin:&lt;your token id&gt;</code>: it is
        logged, counted and reported to webhooks like any call. No quota applies.
      </p>
      <Loading loaded={agents}>
        {({ items }) => (
          <Picker
            id="pick-agent"
            label="Agent"
            value={agentId}
            options={items.map((agent) => agent.id)}
            onPick={(id) => (window.location.hash = href('playground', id))}
          />
        )}
      </Loading>
      {agentId && <AgentTools agentId={agentId} tool={tool} />}
    </>
  );
}

function AgentTools({ agentId, tool }: { agentId: string; tool?: string }) {
  const agent = useApi(() => client.GET('/agents/{agentId}', { params: { path: { agentId } } }), [agentId]);
  return (
    <Loading loaded={agent}>
      {({ tools }) => {
        const chosen = tools.find((each) => each.name === tool);
        return (
          <>
            <Picker
              id="pick-tool"
              label="Tool"
              value={tool}
              options={tools.map((each) => each.name)}
              onPick={(name) => (window.location.hash = href('playground', agentId, name))}
            />
            {tool && !chosen && (
              <p role="alert" className="error">
                {agentId} has no tool {tool}.
              </p>
            )}
            {chosen && <ToolRunner agentId={agentId} tool={chosen} />}
          </>
        );
      }}
    </Loading>
  );
}

function Picker(props: { id: string; label: string; value?: string; options: string[]; onPick: (v: string) => void }) {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <select id={props.id} value={props.value ?? ''} onChange={(event) => props.onPick(event.target.value)}>
        <option value="" disabled>
          choose
        </option>
        {props.options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Most log lines kept on screen (the oldest go first). */
const LOG_LINES = 50;

function ToolRunner({ agentId, tool }: { agentId: string; tool: Tool }) {
  const schema = tool.definition.input_schema as Record<string, unknown>;
  const fields = fieldsOf(schema);
  const [values, setValues] = useState<Values>(() => (fields ? initialValues(fields) : { '': '{}' }));
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [run, setRun] = useState<Run>();
  const running = useRef<AbortController>(undefined);
  const form = useRef<HTMLFormElement>(null);

  const apply = ({ event, data }: StreamEvent) =>
    setRun((previous) => {
      const now: Run = { ...previous!, logs: previous?.logs ?? [] };
      if (event === 'started') now.callId = String(data.call_id);
      else if (event === 'progress') now.progress = data as Run['progress'];
      else if (event === 'log' || event === 'notice')
        now.logs = [
          ...now.logs,
          `${event === 'log' ? String(data.level) : 'notice'}: ${JSON.stringify(data.data ?? data.type)}`,
        ].slice(-LOG_LINES);
      else if (event === 'result') now.result = data as unknown as Run['result'];
      else if (event === 'error') now.failure = `${String(data.code)}: ${String(data.message)}`;
      else if (event === 'bye') now.failure = 'The gateway is shutting down: the call was cancelled.';
      return now;
    });

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const made = fields ? argumentsOf(fields, values) : jsonArguments(values['']);
    setProblems(made.problems);
    if (Object.keys(made.problems).length) {
      form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
      return;
    }
    const controller = new AbortController();
    running.current = controller;
    setRun({ state: 'running', logs: [] });
    try {
      await playgroundCall(agentId, { tool: tool.name, arguments: made.args }, apply, controller.signal);
      setRun((previous) => ({ ...previous!, state: 'done' }));
    } catch (error) {
      const cancelled = controller.signal.aborted;
      setRun((previous) => ({
        ...previous!,
        state: cancelled ? 'cancelled' : 'done',
        ...(!cancelled && { failure: (error as Error).message }),
      }));
    } finally {
      running.current = undefined;
    }
  };

  return (
    <>
      <section aria-labelledby="tool-heading" className="tool">
        <h2 id="tool-heading">{tool.name}</h2>
        {tool.definition.description && <p>{tool.definition.description}</p>}
        <form ref={form} onSubmit={submit} noValidate aria-label={`Arguments of ${tool.name}`}>
          {fields ? (
            <SchemaFields
              fields={fields}
              values={values}
              problems={problems}
              onChange={(name, value) => setValues((previous) => ({ ...previous, [name]: value }))}
            />
          ) : (
            <JsonArguments value={values['']} problem={problems['']} onChange={(value) => setValues({ '': value })} />
          )}
          {Object.keys(problems).length > 0 && (
            <p role="alert" className="error">
              {Object.keys(problems).length === 1 ? 'One field needs' : `${Object.keys(problems).length} fields need`}{' '}
              fixing before the call can run.
            </p>
          )}
          <div className="actions">
            <button type="submit" disabled={run?.state === 'running'}>
              Run {tool.name}
            </button>
            {run?.state === 'running' && (
              <button type="button" className="danger" onClick={() => running.current?.abort()}>
                Cancel
              </button>
            )}
          </div>
        </form>
      </section>
      {run && <RunView run={run} />}
    </>
  );
}

function JsonArguments(props: { value: string; problem?: string; onChange: (value: string) => void }) {
  return (
    <div className="field">
      <label htmlFor="arg-json">Arguments (JSON object)</label>
      <textarea
        id="arg-json"
        rows={6}
        spellCheck={false}
        value={props.value}
        aria-invalid={props.problem ? true : undefined}
        aria-describedby={props.problem ? 'arg-json-problem' : undefined}
        onChange={(event) => props.onChange(event.target.value)}
      />
      {props.problem && (
        <p className="error" id="arg-json-problem">
          {props.problem}
        </p>
      )}
    </div>
  );
}

function jsonArguments(text: string): { args: Record<string, unknown>; problems: Record<string, string> } {
  try {
    const args = JSON.parse(text || '{}') as unknown;
    if (typeof args === 'object' && args !== null && !Array.isArray(args))
      return { args: args as Record<string, unknown>, problems: {} };
  } catch {
    // below
  }
  return { args: {}, problems: { '': 'The arguments must be a JSON object, for example {"text": "hello"}.' } };
}
