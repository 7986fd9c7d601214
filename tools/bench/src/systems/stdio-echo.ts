import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { registerEcho } from './echo-tool';

/** `node stdio-echo.js`: the stdio MCP server that mcp-proxy and supergateway front. */
const server = new McpServer({ name: 'bench-stdio-echo', version: '1.0.0' });
registerEcho(server);
server.connect(new StdioServerTransport()).catch((error: Error) => {
  process.stderr.write(`stdio echo: ${error.message}\n`);
  process.exit(1);
});
