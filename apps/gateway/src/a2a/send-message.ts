import { fileUuid, publicFileId } from '../files/file-ids';
import { IDEMPOTENCY_ARGUMENT } from '../idempotency/idempotency-key';
import type { ConversationalContent } from '../calls/call-shapes';
import type { Message, Part } from './wire';

/** Where a message names the skill it calls. */
export const SKILL_METADATA_KEY = 'skill';

/** A `SendMessage` as the call path takes it. */
export interface SendMessage {
  message: Message;
  /** The skill named in `message.metadata.skill` (or the request's `metadata.skill`); none: a conversational message. */
  skill?: string;
  /**
   * The first `data` part (an object), else `{"text": <the text parts, joined>}`
   * (`{}` when there are none);
   * with `attachments` for the `url` parts that name this gateway's files.
   */
  arguments: Record<string, unknown>;
  /** What a conversational message says: the text parts joined by newlines, and the first `data` part (an object). */
  said: ConversationalContent;
  returnImmediately: boolean;
  /** `configuration.taskPushNotificationConfig` (as sent: push/ checks it), a config made with the task. */
  pushConfig?: unknown;
}

export type ParsedSend = { ok: true; send: SendMessage } | { ok: false; detail: string };

const MESSAGE_ID = /^[\x20-\x7e]{1,255}$/;
/** The gateway's argument the pipeline resolves files from (`../files/attachments.ts`). */
const ATTACHMENTS = 'attachments';

/**
 * `SendMessageRequest` params, checked as far as this surface relies on them;
 * never a throw. `messageId` is the call's idempotency key (one space with MCP's
 * and REST's keys of the same caller), so it must be one: 1-255 printable ASCII.
 */
export function parseSendMessage(params: unknown): ParsedSend {
  if (!isObject(params)) return invalid('params must be a SendMessageRequest object');
  const message = params.message;
  if (!isObject(message)) return invalid('message is required');
  if (typeof message.messageId !== 'string' || !MESSAGE_ID.test(message.messageId))
    return invalid('message.messageId must be a string of 1-255 printable ASCII characters');
  if (message.role !== 'ROLE_USER' && message.role !== 'user') return invalid('message.role must be ROLE_USER');
  if (!Array.isArray(message.parts) || message.parts.length === 0) return invalid('message.parts must hold a part');
  for (const [field, value] of [
    ['message.contextId', message.contextId],
    ['message.taskId', message.taskId],
  ] as const) {
    if (value !== undefined && typeof value !== 'string') return invalid(`${field} must be a string`);
  }
  const parts: Part[] = [];
  for (const [i, part] of message.parts.entries()) {
    const checked = checkPart(part);
    if (typeof checked === 'string') return invalid(`message.parts[${i}]: ${checked}`);
    parts.push(checked);
  }
  for (const [field, value] of [
    ['message.metadata', message.metadata],
    ['metadata', params.metadata],
    ['configuration', params.configuration],
  ] as const) {
    if (value !== undefined && value !== null && !isObject(value)) return invalid(`${field} must be an object`);
  }
  const skill =
    (message.metadata as Record<string, unknown> | undefined)?.[SKILL_METADATA_KEY] ??
    (params.metadata as Record<string, unknown> | undefined)?.[SKILL_METADATA_KEY];
  if (skill !== undefined && (typeof skill !== 'string' || skill.length === 0))
    return invalid('metadata.skill must name a skill of the agent card');
  const args = argumentsOf(parts);
  if (IDEMPOTENCY_ARGUMENT in args)
    return invalid(`${IDEMPOTENCY_ARGUMENT} is not an argument here: the messageId is the idempotency key`);
  const attachments = attachmentsOf(parts);
  if (attachments.length) {
    if (ATTACHMENTS in args) return invalid('attach files as url parts or in the data part, not both');
    args[ATTACHMENTS] = attachments;
  }
  const configuration = (params.configuration ?? {}) as Record<string, unknown>;
  return {
    ok: true,
    send: {
      message: { ...(message as unknown as Message), parts },
      ...(skill !== undefined && { skill: skill as string }),
      arguments: args,
      said: saidIn(parts),
      returnImmediately: configuration.returnImmediately === true,
      ...(configuration.taskPushNotificationConfig != null && { pushConfig: configuration.taskPushNotificationConfig }),
    },
  };
}

/** One part: exactly one of `text`, `raw`, `url`, `data`, of the right type. */
function checkPart(part: unknown): Part | string {
  if (!isObject(part)) return 'a part must be an object';
  const kinds = (['text', 'raw', 'url', 'data'] as const).filter((kind) => part[kind] !== undefined);
  if (kinds.length !== 1) return 'a part holds exactly one of text, raw, url, data';
  const [kind] = kinds;
  if (kind !== 'data' && typeof part[kind] !== 'string') return `${kind} must be a string`;
  for (const field of ['filename', 'mediaType'] as const) {
    if (part[field] !== undefined && typeof part[field] !== 'string') return `${field} must be a string`;
  }
  return part as Part;
}

function argumentsOf(parts: Part[]): Record<string, unknown> {
  const { text, data } = saidIn(parts);
  if (data) return { ...data };
  return parts.some((part) => part.text !== undefined) ? { text } : {};
}

function saidIn(parts: Part[]): ConversationalContent {
  const data = parts.find((part) => part.data !== undefined && isObject(part.data));
  const text = parts.flatMap((part) => (part.text !== undefined ? [part.text] : [])).join('\n');
  return { text, ...(data && { data: { ...(data.data as Record<string, unknown>) } }) };
}

/** This gateway's file a `url` part names: its id (`file_…`), or a signed URL of it (`…/api/v1/files/{id}/content?…`). */
function fileIdOf(url: string): string | undefined {
  if (fileUuid(url)) return url;
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  const id = /^\/api\/v1\/files\/([^/]+)\/content$/.exec(path)?.[1];
  return id && fileUuid(id) ? id : undefined;
}

/**
 * The `url` parts that name this gateway's files, as MCP's `attachments`
 * (`../files/README.md`): the pipeline checks each belongs to the agent and the
 * caller, and hands the agent a signed URL of it, exactly as for MCP.
 */
function attachmentsOf(parts: Part[]): Record<string, string>[] {
  return parts.flatMap((part) => {
    const fileId = part.url !== undefined ? fileIdOf(part.url) : undefined;
    if (!fileId) return [];
    return [
      {
        file_id: publicFileId(fileUuid(fileId)!),
        ...(part.filename && { filename: part.filename }),
        ...(part.mediaType && { content_type: part.mediaType }),
      },
    ];
  });
}

function invalid(detail: string): ParsedSend {
  return { ok: false, detail };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
