// The official TypeScript SDK v2 client (@modelcontextprotocol/client) on 2026-07-28 driving a task
// (io.modelcontextprotocol/tasks) across two gateway replicas: node tasks-client.mjs <mcp url of
// replica 0> <mcp url of replica 1> <api key>. tools/call goes to replica 0, every tasks/* request to
// replica 1. SDK 2.3.1 has no tasks support: it refuses a tools/call answered `resultType: "task"`
// (UnsupportedResultType), so the call that makes the task is a plain POST; tasks/get goes through
// client.request with a schema that keeps the whole result. Prints one JSON object with what it saw;
// the e2e test checks it. Node 22.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url0, url1, key] = process.argv.slice(2);
const urls = [url0, url1];
const seen = [];

const routing = async (input, init) => {
  const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
  const target = body?.method?.startsWith('tasks/') ? 1 : 0;
  if (init?.method === 'POST' && body?.method) seen.push({ replica: target, method: body.method });
  return fetch(String(input).replace(url0, urls[target]), init);
};

const transport = new StreamableHTTPClientTransport(new URL(url0), {
  requestInit: { headers: { 'X-Agent-API-Key': key } },
  fetch: routing,
});
const client = new Client(
  { name: 'tasks-probe', version: '1.0.0' },
  {
    capabilities: { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } },
    versionNegotiation: { mode: { pin: '2026-07-28' } },
  },
);
await client.connect(transport);
// A Standard Schema that keeps the whole result (the SDK has no tasks result types).
const anything = { '~standard': { version: 1, vendor: 'mcpgw', validate: (value) => ({ value }) } };

const VERSION = '2026-07-28';
const made = await fetch(url0, {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'x-agent-api-key': key,
    'mcp-protocol-version': VERSION,
    'mcp-method': 'tools/call',
    'mcp-name': 'long_report',
  },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'long_report',
      arguments: { topic: 'sdk', seconds: 1.5 },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': VERSION,
        'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
        'io.modelcontextprotocol/clientInfo': { name: 'tasks-probe', version: '1.0.0' },
      },
    },
  }),
});
seen.push({ replica: 0, method: 'tools/call' });
const created = (await made.json()).result;
const statuses = [];
let task;
for (const deadline = Date.now() + 15_000; Date.now() < deadline;) {
  task = await client.request({ method: 'tasks/get', params: { taskId: created.taskId } }, anything);
  statuses.push(task.status);
  if (['completed', 'failed', 'cancelled'].includes(task.status)) break;
  await new Promise((r) => setTimeout(r, created.pollIntervalMs ?? 500));
}
await client.close();

process.stdout.write(JSON.stringify({ created, task, statuses: [...new Set(statuses)], seen }));
