import { useState } from 'react';
import { client, type Pod, type Tool } from '../api';
import { useApi, useTitle } from '../hooks';
import { href } from '../routes';
import { AgentTabs, ListTable, Loading, Time } from './common';

export function AgentsPage() {
  useTitle('Agents');
  const agents = useApi(() => client.GET('/agents'), []);
  return (
    <>
      <h1>Agents</h1>
      <ListTable
        loaded={agents}
        caption="Every agent, by id"
        columns={['Agent', 'Workspace', 'Tools', 'Pods online', 'Created']}
        empty="No agent yet: npm run admin -- agent create --id my-agent --workspace demo"
        row={(agent) => (
          <tr key={agent.id}>
            <th scope="row">
              <a href={href('agents', agent.id)}>{agent.id}</a>
            </th>
            <td>{agent.workspace_id}</td>
            <td>{agent.tools}</td>
            <td>{agent.pods_online}</td>
            <td>
              <Time at={agent.created_at} />
            </td>
          </tr>
        )}
      />
    </>
  );
}

/** One agent: how callers authenticate, its pods (online or not), and its tools with their JSON Schemas. */
export function AgentPage({ agentId }: { agentId: string }) {
  useTitle(`Agent ${agentId}`);
  const agent = useApi(() => client.GET('/agents/{agentId}', { params: { path: { agentId } } }), [agentId]);
  return (
    <>
      <h1>Agent {agentId}</h1>
      <AgentTabs agentId={agentId} current="agent" />
      <Loading loaded={agent}>
        {(detail) => (
          <>
            <dl className="facts">
              <dt>Workspace</dt>
              <dd>{detail.workspace_id}</dd>
              <dt>Created</dt>
              <dd>
                <Time at={detail.created_at} />
              </dd>
              <dt>Callers authenticate with</dt>
              <dd>
                {[detail.auth_methods.api_keys && 'API keys', detail.auth_methods.oauth && 'OAuth']
                  .filter(Boolean)
                  .join(', ') || 'nothing enabled'}
              </dd>
              <dt>Last registration</dt>
              <dd>
                {detail.last_registered_at ? <Time at={detail.last_registered_at} /> : 'never (or not for a day)'}
              </dd>
              <dt>Resources, templates, prompts</dt>
              <dd>
                {detail.resources.length}, {detail.resource_templates.length}, {detail.prompts.length}
              </dd>
            </dl>
            <Pods pods={detail.pods} />
            <h2>Tools ({detail.tools.length})</h2>
            {detail.tools.length === 0 ? <p>This agent has registered no tool yet.</p> : <Tools tools={detail.tools} />}
          </>
        )}
      </Loading>
    </>
  );
}

/** The agent's pods, the most recently seen first: online (heard within 3 heartbeat intervals) or offline. */
function Pods({ pods }: { pods: Pod[] }) {
  const online = pods.filter((pod) => pod.online).length;
  return (
    <section aria-labelledby="pods-heading">
      <h2 id="pods-heading">
        Pods ({online} online of {pods.length})
      </h2>
      {pods.length === 0 ? (
        <p>No pod has registered for a day.</p>
      ) : (
        <table>
          <caption>The agent's pods, the most recently seen first</caption>
          <thead>
            <tr>
              <th scope="col">Pod</th>
              <th scope="col">State</th>
              <th scope="col">Last seen</th>
              <th scope="col">Registered</th>
            </tr>
          </thead>
          <tbody>
            {pods.map((pod) => (
              <tr key={pod.pod_id}>
                <th scope="row">{pod.pod_id}</th>
                <td>
                  <span className={pod.online ? 'pod-online' : 'pod-offline'}>{pod.online ? 'online' : 'offline'}</span>
                </td>
                <td>
                  <Time at={pod.last_seen_at} />
                </td>
                <td>
                  <Time at={pod.registered_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** The tools, filtered by name, each with its input schema (folded: an agent may have dozens). */
function Tools({ tools }: { tools: Tool[] }) {
  const [filter, setFilter] = useState('');
  const shown = tools.filter((tool) => tool.name.toLowerCase().includes(filter.trim().toLowerCase()));
  return (
    <>
      <p className="inline">
        <label htmlFor="tool-filter">Filter tools by name</label>{' '}
        <input id="tool-filter" type="search" value={filter} onChange={(event) => setFilter(event.target.value)} />{' '}
        <span role="status">
          {shown.length} of {tools.length}
        </span>
      </p>
      {shown.map((tool) => (
        <section key={tool.id} className="tool" aria-labelledby={`tool-${tool.id}`}>
          <h3 id={`tool-${tool.id}`}>{tool.name}</h3>
          <p>{tool.definition.description}</p>
          <details>
            <summary>Input schema of {tool.name}</summary>
            <pre tabIndex={0} aria-label={`JSON Schema of ${tool.name}`}>
              {JSON.stringify(tool.definition.input_schema, null, 2)}
            </pre>
          </details>
        </section>
      ))}
    </>
  );
}
