import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** The `echo` tool of the bare SDK servers: {text} → the text as text content, like the agent pod's. */
export function registerEcho(server: McpServer): void {
  server.registerTool(
    'echo',
    { title: 'Echo', description: 'Returns its input unchanged.', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
}
