import { client } from '../api';
import { useApi, useTitle } from '../hooks';
import { Loading } from './common';
import { LiveFigures } from './live-figures';

/** What the management API tells at a glance: agents (and those with a pod online), their tools, webhooks and those disabled or failing. */
export function OverviewPage() {
  useTitle('Overview');
  const agents = useApi(() => client.GET('/agents'), []);
  const webhooks = useApi(() => client.GET('/webhooks'), []);
  return (
    <>
      <h1>Overview</h1>
      <section aria-labelledby="agents-heading">
        <h2 id="agents-heading">Agents</h2>
        <Loading loaded={agents}>
          {({ items, agents_online }) => (
            <dl className="stats">
              <Stat name="Agents" value={items.length} href="#/agents" />
              <Stat name="Agents online" value={agents_online} />
              <Stat name="Tools" value={items.reduce((sum, agent) => sum + agent.tools, 0)} />
              <Stat name="Agents without tools" value={items.filter((agent) => agent.tools === 0).length} />
            </dl>
          )}
        </Loading>
      </section>
      <section aria-labelledby="webhooks-heading">
        <h2 id="webhooks-heading">Webhooks</h2>
        <Loading loaded={webhooks}>
          {({ items }) => (
            <dl className="stats">
              <Stat name="Webhooks" value={items.length} href="#/webhooks" />
              <Stat name="Disabled" value={items.filter((hook) => hook.disabled_at).length} />
              <Stat name="Failing" value={items.filter((hook) => hook.failing_since).length} />
            </dl>
          )}
        </Loading>
      </section>
      <LiveFigures onRegistration={agents.reload} />
    </>
  );
}

function Stat({ name, value, href }: { name: string; value: number; href?: string }) {
  return (
    <div className="stat">
      <dt>{name}</dt>
      <dd>{href ? <a href={href}>{value}</a> : value}</dd>
    </div>
  );
}
