import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface McpConnection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  sessionId: string | undefined;
  close(): Promise<void>;
}

/**
 * The official MCP SDK client against a gateway, with the agent key in
 * `requestInit.headers`, as any MCP application would connect. Pass `sessionId`
 * to resume an existing session (another replica, or after a restart).
 */
export async function connectMcp(
  url: string,
  apiKey: string,
  options: { sessionId?: string; headers?: Record<string, string> } = {},
): Promise<McpConnection> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    sessionId: options.sessionId,
    requestInit: { headers: { 'X-Agent-API-Key': apiKey, ...options.headers } },
  });
  const client = new Client({ name: 'mcpgw-tests', version: '1.0.0' });
  // With a sessionId the SDK resumes that session instead of sending initialize.
  await client.connect(transport);
  return {
    client,
    transport,
    get sessionId() {
      return transport.sessionId;
    },
    close: () => client.close(),
  };
}
