import { connectMcp, startTestStack, workspaceRoot, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { FilesApi } from '@mcpgw/files-client';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The source documents' examples as written (issue 28): their tools/call of
 * `summarize_pdf` read verbatim from `fixtures/seed-summarize-pdf.json`
 * (copied from ../shared/seeds/beeos-mcp-tools.zh.md), with only its example
 * file id replaced by a real upload's; and `attachments` on a tool that does
 * not declare them.
 */
const SEED_REQUEST = join(workspaceRoot(), 'apps/gateway/test/fixtures/seed-summarize-pdf.json');

describe("the source documents' examples, word for word", () => {
  let env: TestStack;
  let mcp: McpConnection;
  let db: Client;
  let files: FilesApi;

  /** Messages sent to the agent so far (each is stored before it is delivered). */
  const chatMessages = async () =>
    (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM messaging.messages WHERE type = 'chat_message'`))
      .rows[0].n;

  beforeAll(async () => {
    env = await startTestStack();
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
    files = new FilesApi({ baseUrl: env.gatewayUrls[0], apiKey: env.apiKey });
  });

  afterAll(async () => {
    await db?.end();
    await mcp?.close();
    await env?.stop();
  });

  it("the seed's summarize_pdf request, after a real upload, summarizes; sent again, it replays without the agent", async () => {
    const bytes = Buffer.concat([Buffer.from('%PDF-1.7 q3 figures\n'), randomBytes(50_000)]);
    const fileId = await files.upload(bytes, { filename: 'q3.pdf', contentType: 'application/pdf' });
    expect(fileId).toMatch(/^file_[0-9a-f]{32}$/); // the seed's form of id
    const seed = readFileSync(SEED_REQUEST, 'utf8');
    expect(seed).toContain('"file_id": "file_abc123"');
    const body = seed.replace('file_abc123', fileId);
    const send = () =>
      fetch(env.mcpUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-agent-api-key': env.apiKey },
        body,
      });

    const before = await chatMessages();
    const first = await send();
    expect(first.status).toBe(200);
    const answer = (await first.json()) as {
      id: number;
      result: { isError?: boolean; structuredContent: { files: { name: string; size: number; sha256: string }[] } };
    };
    expect(answer.id).toBe(42);
    expect(answer.result.isError).toBeFalsy();
    expect(answer.result.structuredContent.files).toEqual([
      expect.objectContaining({
        name: 'q3.pdf',
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      }),
    ]);
    expect(await chatMessages()).toBe(before + 1);

    const again = await send();
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const replayed = (await again.json()) as typeof answer;
    expect(replayed.result.structuredContent).toEqual(answer.result.structuredContent);
    expect(await chatMessages()).toBe(before + 1); // the agent was not invoked again
  });

  it('attachments work on a tool that does not declare them: the envelope carries them, the arguments do not', async () => {
    const fileId = await files.upload(Buffer.from('any tool takes files'), {
      filename: 'note.txt',
      contentType: 'text/plain',
    });
    // echo's schema is {text} with no other property allowed: attachments are the gateway's, not the tool's.
    const result = await mcp.client.callTool({
      name: 'echo',
      arguments: { text: 'with a file', attachments: [{ file_id: fileId }], idempotency_key: `echo-${fileId}` },
    });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'with a file' }]);
    const { rows } = await db.query<{
      envelope: {
        tool_call: { arguments: Record<string, unknown> };
        attachments?: { metadata: { file_id: string } }[];
      };
    }>(
      `SELECT envelope FROM messaging.messages
        WHERE type = 'chat_message' AND envelope->'tool_call'->>'name' = 'echo'
          AND envelope->'tool_call'->'arguments'->>'text' = 'with a file'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].envelope.tool_call.arguments).toEqual({ text: 'with a file' });
    expect(rows[0].envelope.attachments?.map((part) => part.metadata.file_id)).toEqual([fileId]);

    // The gateway's own schema still holds for them: a malformed list is refused before the agent.
    const refused = await mcp.client
      .callTool({ name: 'echo', arguments: { text: 'bad', attachments: [{ file: 'x' }] } })
      .catch((error: { code?: number }) => error);
    expect(refused).toMatchObject({ code: -32602 });
  });
});
