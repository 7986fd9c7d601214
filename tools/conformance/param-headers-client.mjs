// The official TypeScript SDK v2 client (@modelcontextprotocol/client), pinned to 2026-07-28:
// node param-headers-client.mjs <mcp url> <api key>. Lists the tools (their schemas as the client
// keeps them) and calls test_param_headers, whose x-mcp-header parameters the client mirrors into
// Mcp-Param-* headers (Base64 for a non-ASCII value). Prints one JSON object. Runs on Node 22.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, key] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { 'X-Agent-API-Key': key } },
});
const client = new Client(
  { name: 'param-headers-probe', version: '1.0.0' },
  { versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
await client.connect(transport);
const { tools } = await client.listTools();
const schemaOf = (name) => tools.find((t) => t.name === name)?.inputSchema ?? null;
const called = await client.callTool({ name: 'test_param_headers', arguments: { region: 'Zürich', priority: 3 } });
await client.close();
process.stdout.write(
  JSON.stringify({
    negotiated: transport.protocolVersion ?? null,
    schema2020: schemaOf('json_schema_2020_12_tool'),
    paramSchema: schemaOf('test_param_headers'),
    called,
  }),
);
