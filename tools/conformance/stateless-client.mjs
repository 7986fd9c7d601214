// The official TypeScript SDK v2 client (@modelcontextprotocol/client), pinned to the
// stateless revision 2026-07-28, against the gateway: node stateless-client.mjs <mcp url> <api key>
// Prints one JSON object with what it saw; the e2e test checks it. Runs on Node 22.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, key, mode = 'pin'] = process.argv.slice(2);
const negotiation = mode === 'auto' ? 'auto' : { pin: '2026-07-28' };

async function connect() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { 'X-Agent-API-Key': key } },
  });
  const client = new Client(
    { name: 'stateless-probe', version: '1.0.0' },
    { versionNegotiation: { mode: negotiation } },
  );
  await client.connect(transport);
  return { client, transport };
}

const { client, transport } = await connect();
const tools = (await client.listTools()).tools.map((t) => t.name);
const first = await client.callTool({ name: 'echo', arguments: { text: 'turn one' } });
const handle = first._meta?.['mcpgw/conversation'];
await client.callTool({ name: 'echo', arguments: { text: 'turn two' }, _meta: { 'mcpgw/conversation': handle } });
const recalled = await client.callTool({ name: 'recall', arguments: {}, _meta: { 'mcpgw/conversation': handle } });
const fresh = await client.callTool({ name: 'recall', arguments: {} });
const progress = [];
await client.callTool(
  { name: 'sleep', arguments: { ms: 300, progress_every_ms: 100 } },
  { onprogress: (p) => progress.push(p.progress) },
);
await client.close();

process.stdout.write(
  JSON.stringify({
    negotiated: transport.protocolVersion ?? null,
    sessionId: transport.sessionId ?? null,
    tools,
    handle: typeof handle === 'string',
    recalled: recalled.structuredContent.turns.map((t) => t.arguments.text),
    fresh: fresh.structuredContent.turns.length,
    progress,
  }),
);
