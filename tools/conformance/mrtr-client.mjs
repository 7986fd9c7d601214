// The official TypeScript SDK v2 client (@modelcontextprotocol/client) on 2026-07-28, against two
// gateway replicas: node mrtr-client.mjs <mcp url of replica 0> <mcp url of replica 1> <api key>
// Each POST goes to the replica the script picks (alternating for tool calls, so an MRTR retry
// lands on the other one). Prints one JSON object with what it saw; the e2e test checks it. Node 22.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url0, url1, key] = process.argv.slice(2);
const urls = [url0, url1];
const seen = []; // one entry per POST: which replica, which method, whether it carried a requestState
let next = 0;
let pinned; // when set, every POST goes to this replica

const routing = async (input, init) => {
  const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
  let target = 0;
  if (init?.method === 'POST' && body?.method) {
    target = pinned ?? next;
    if (pinned === undefined) next = 1 - next;
    seen.push({
      replica: target,
      method: body.method,
      name: body.params?.name,
      requestState: !!body.params?.requestState,
    });
  }
  return fetch(String(input).replace(url0, urls[target]), init);
};

const transport = new StreamableHTTPClientTransport(new URL(url0), {
  requestInit: { headers: { 'X-Agent-API-Key': key } },
  fetch: routing,
});
// Declares elicitation only: the agent may not sample this client.
const client = new Client(
  { name: 'mrtr-probe', version: '1.0.0' },
  { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
const asked = [];
client.setRequestHandler('elicitation/create', async (request) => {
  asked.push(request.params.message);
  return { action: 'accept', content: { name: 'Zoe' } };
});
await client.connect(transport);

const text = (result) => result.content?.[0]?.text;
const elicited = text(await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }));
const elicitedRoute = seen.filter((s) => s.name === 'test_input_required_result_elicitation');
const capabilities = text(await client.callTool({ name: 'test_input_required_result_capabilities', arguments: {} }));

// subscriptions/listen on replica 0; the tool list changes through replica 1.
const changes = [];
client.setNotificationHandler('notifications/tools/list_changed', (n) => changes.push(n.params ?? {}));
pinned = 0;
const subscription = await client.listen({ toolsListChanged: true, promptsListChanged: false });
pinned = 1;
await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
const deadline = Date.now() + 10_000;
while (changes.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
await client.callTool({ name: 'test_trigger_tool_change', arguments: {} }); // and back
await subscription.close();
await client.close();

process.stdout.write(
  JSON.stringify({ elicited, elicitedRoute, asked, capabilities, honored: subscription.honoredFilter, changes }),
);
