import type { FilePartDto } from '@mcpgw/contracts';
import { createHash } from 'node:crypto';
import { text, type Skill } from './skill';

/** How many leading bytes of each file are returned as text. */
const HEAD_BYTES = 64;

interface FileSummary {
  name: string;
  mime_type: string | null;
  size: number;
  sha256: string;
  head: string;
}

/**
 * Takes attachments: downloads each file through the signed URL the gateway
 * put in the chat_message (streamed, hashed as it comes, never held whole)
 * and returns its name, size, sha256 and first bytes as text. A mock: it does
 * not read PDF.
 */
export const summarizePdfSkill: Skill = {
  definition: {
    name: 'summarize_pdf',
    title: 'Summarize a PDF',
    kind: 'function',
    description:
      'Summarizes attached files: name, size, sha256 and the first bytes. Upload each file first (POST /api/v1/files/presign-upload), then attach it by file_id.',
    input_schema: {
      type: 'object',
      properties: {
        attachments: {
          type: 'array',
          minItems: 1,
          maxItems: 20,
          items: {
            type: 'object',
            properties: {
              file_id: { type: 'string' },
              filename: { type: 'string' },
              content_type: { type: 'string' },
            },
            required: ['file_id'],
            additionalProperties: false,
          },
        },
      },
      required: ['attachments'],
      additionalProperties: false,
    },
    output_schema: {
      type: 'object',
      properties: {
        files: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              mime_type: { type: ['string', 'null'] },
              size: { type: 'integer' },
              sha256: { type: 'string' },
              head: { type: 'string' },
            },
            required: ['name', 'size', 'sha256', 'head'],
          },
        },
      },
      required: ['files'],
    },
    side_effect_class: 'read',
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  async run(_args, ctx) {
    const parts = ctx.message.attachments ?? [];
    if (parts.length === 0)
      return { content: [text('summarize_pdf: no attachments reached the agent')], isError: true };
    const files: FileSummary[] = [];
    for (const part of parts) {
      const summary = await summarize(part, ctx.signal);
      if (typeof summary === 'string') return { content: [text(summary)], isError: true };
      files.push(summary);
    }
    return { content: [text(JSON.stringify({ files }))], structured: { files } };
  },
};

async function summarize(part: FilePartDto, signal: AbortSignal): Promise<FileSummary | string> {
  const name = part.file.name ?? 'file';
  const response = await fetch(part.file.uri, { signal });
  if (!response.ok || !response.body) {
    return `summarize_pdf: downloading ${name} failed: HTTP ${response.status} ${await response.text()}`;
  }
  const hash = createHash('sha256');
  let size = 0;
  let head = Buffer.alloc(0);
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    if (head.length < HEAD_BYTES)
      head = Buffer.concat([head, Buffer.from(chunk).subarray(0, HEAD_BYTES - head.length)]);
    size += chunk.length;
  }
  return {
    name,
    mime_type: part.file.mimeType ?? response.headers.get('content-type'),
    size,
    sha256: hash.digest('hex'),
    // Bytes as text; U+0000 cannot be stored in a reply (PostgreSQL jsonb), so it is shown as U+FFFD.
    head: head.toString('utf8').replace(/\u0000/g, '\ufffd'),
  };
}
