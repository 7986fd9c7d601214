import { Injectable } from '@nestjs/common';
import type { HoldDeadline } from '@mcpgw/persistence';
import type { FilePartDto, SkillDefinition } from '@mcpgw/contracts';
import { fileUuid, publicFileId } from './file-ids';
import { FilesService } from './files.service';

/** Where a client attaches files: `arguments.attachments` of tools/call. */
export const ATTACHMENTS_ARGUMENT = 'attachments';

/** At most this many files per call. */
export const MAX_ATTACHMENTS = 20;

/**
 * The arguments a tool is validated and called with: without `attachments`,
 * unless its input schema declares that property (then it gets the list as
 * sent, beside the resolved FileParts of the envelope). Any tool takes files.
 */
export function withoutAttachments(
  args: Record<string, unknown>,
  tool: Pick<SkillDefinition, 'input_schema'>,
): Record<string, unknown> {
  if (!(ATTACHMENTS_ARGUMENT in args)) return args;
  const declared = (tool.input_schema.properties as Record<string, unknown> | undefined)?.[ATTACHMENTS_ARGUMENT];
  if (declared !== undefined) return args;
  const { [ATTACHMENTS_ARGUMENT]: _taken, ...rest } = args;
  return rest;
}

export type ResolvedAttachments = { ok: true; parts: FilePartDto[] } | { ok: false; problems: string[] };

interface Attachment {
  /** As the client sent it (`file_<hex>`, or a UUID handed out before). */
  file_id: string;
  /** The file's row. */
  uuid: string;
  filename?: string;
  content_type?: string;
}

/**
 * `arguments.attachments: [{file_id, filename?, content_type?}]` to A2A
 * FileParts with signed download URLs. A file must be uploaded, unexpired,
 * and the caller's own (same agent, same API key or grant task): an unknown
 * file and another's get the same answer, so ids cannot be probed.
 */
@Injectable()
export class AttachmentResolver {
  constructor(private readonly files: FilesService) {}

  /** `deadline`: the call's, which the files' rows wait for at most while the database is away. */
  async resolve(
    args: Record<string, unknown>,
    agentId: string,
    caller: string,
    deadline?: HoldDeadline,
  ): Promise<ResolvedAttachments> {
    if (!(ATTACHMENTS_ARGUMENT in args)) return { ok: true, parts: [] };
    const shaped = shape(args[ATTACHMENTS_ARGUMENT]);
    if (!Array.isArray(shaped)) return { ok: false, problems: [shaped] };
    const rows = await this.files.findMany(
      shaped.map((a) => a.uuid),
      deadline,
    );
    const found = new Map(rows.map((f) => [f.id, f]));
    const problems: string[] = [];
    const parts: FilePartDto[] = [];
    shaped.forEach((attachment, i) => {
      const file = found.get(attachment.uuid);
      const at = `attachments[${i}]`;
      if (!file || file.agentId !== agentId || file.caller !== caller)
        return void problems.push(`${at}: no file ${attachment.file_id} of this agent and caller`);
      if (file.expiresAt.getTime() <= Date.now())
        return void problems.push(`${at}: file ${attachment.file_id} has expired`);
      if (file.state !== 'uploaded')
        return void problems.push(
          `${at}: file ${attachment.file_id} is not uploaded (PUT its bytes to its upload_url)`,
        );
      parts.push({
        kind: 'file',
        file: {
          name: attachment.filename ?? file.filename,
          mimeType: attachment.content_type ?? file.contentType,
          uri: this.files.downloadUrl(file.id),
        },
        metadata: { file_id: publicFileId(file.id), size: file.size, sha256: file.sha256 ?? undefined },
      });
    });
    return problems.length ? { ok: false, problems } : { ok: true, parts };
  }
}

/** The attachments, or what is wrong with their shape. */
function shape(value: unknown): Attachment[] | string {
  const wrong = `${ATTACHMENTS_ARGUMENT} must be an array of {file_id, filename?, content_type?} (at most ${MAX_ATTACHMENTS})`;
  if (!Array.isArray(value) || value.length > MAX_ATTACHMENTS) return wrong;
  for (const item of value) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return wrong;
    const { file_id, filename, content_type } = item as Record<string, unknown>;
    if (typeof file_id !== 'string' || !fileUuid(file_id))
      return `${ATTACHMENTS_ARGUMENT}: file_id must be a file id from POST /api/v1/files/presign-upload`;
    if (filename !== undefined && (typeof filename !== 'string' || filename.length === 0 || filename.length > 255))
      return `${ATTACHMENTS_ARGUMENT}: filename must be a string of 1-255 characters`;
    if (
      content_type !== undefined &&
      (typeof content_type !== 'string' || content_type.length > 255 || !/^[^\s/]+\/[^\s]+$/.test(content_type))
    )
      return `${ATTACHMENTS_ARGUMENT}: content_type must be a media type`;
  }
  return (value as Omit<Attachment, 'uuid'>[]).map((a) => ({ ...a, uuid: fileUuid(a.file_id)! }));
}
