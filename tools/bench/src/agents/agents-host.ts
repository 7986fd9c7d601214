/*
 * One process hosting many agents (`npm run bench:agents`, issue 26): each an
 * ordinary @mcpgw/agent-sdk agent with one `echo` skill and its own NATS
 * credentials (one connection each: an agent's credentials are its own). All
 * start at once, as a fleet coming up after an outage would: a registration
 * storm. Prints one JSON line when every agent serves (or the first failure),
 * then serves until SIGTERM.
 *
 *   AGENT_IDS   comma-separated agent ids
 *   CREDS_TEMPLATE  each agent's creds file, `{agent}` standing for its id (unset: no credentials)
 *   NATS_URL, BUS_PREFIX, WORKSPACE_ID   as for any agent
 */
import { createAgent, defineSkill, type Agent, type AgentLogger } from '@mcpgw/agent-sdk';

const echo = defineSkill<{ text: string }>({
  name: 'echo',
  description: 'Returns its text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  sideEffectClass: 'read',
  run: async ({ text }) => text,
});

/** Errors only: a thousand agents' start-up lines would drown the one that matters. */
const quiet: AgentLogger = {
  log: () => undefined,
  warn: () => undefined,
  error: (line) => process.stderr.write(`${JSON.stringify(line)}\n`),
};

async function main(): Promise<void> {
  const ids = (process.env.AGENT_IDS ?? '').split(',').filter(Boolean);
  if (ids.length === 0) throw new Error('AGENT_IDS is empty');
  const credsTemplate = process.env.CREDS_TEMPLATE;
  const started = performance.now();
  const agents: Agent[] = ids.map((agentId) =>
    createAgent({
      agentId,
      skills: [echo],
      handleSignals: false,
      logger: quiet,
      ...(credsTemplate && { natsCreds: credsTemplate.replaceAll('{agent}', agentId) }),
    }),
  );
  const results = await Promise.allSettled(
    agents.map((agent) =>
      agent.start().catch((error: Error) => {
        throw new Error(`${error.message} after ${Math.round(performance.now() - started)} ms`, { cause: error });
      }),
    ),
  );
  const failed = results.flatMap((result, i) =>
    result.status === 'rejected' ? [`${ids[i]}: ${(result.reason as Error).message}`] : [],
  );
  if (process.env.AGENTS_HOST_DEBUG)
    for (const r of results) if (r.status === 'rejected') console.error((r.reason as Error).cause);
  const ms = Math.round(performance.now() - started);
  process.stdout.write(`${JSON.stringify({ serving: ids.length - failed.length, failed: failed.slice(0, 5), ms })}\n`);
  const stop = async () => {
    await Promise.allSettled(agents.map((agent) => agent.stop()));
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((error: Error) => {
  process.stderr.write(`agents-host: ${error.message}\n`);
  process.exit(1);
});
