import type { A2aFailure } from './a2a-errors';
import type { JsonRpcCall } from './json-rpc';
import { isObject } from './send-message';
import type { Part } from './wire';

/*
 * A2A 0.3 over JSON-RPC, as the official SDK's legacy compatibility speaks it
 * (`@a2a-js/sdk` `compat/v0_3`): a request without `A2A-Version` (or with 0.3)
 * is translated to its 1.0 method and params, served by the one 1.0 path, and
 * its answer translated back. Parts carry `kind` (`text`, `data`, `file` with
 * `uri` or `bytes`), roles and states are lower-case (`input-required`), and
 * every result names its `kind`. Push configs nest theirs under
 * `pushNotificationConfig` (`{taskId, pushNotificationConfig: {id, url, token,
 * authentication: {schemes, credentials}}}`); the task is `params.id`.
 */

export const LEGACY_VERSION = '0.3';

const METHODS: Record<string, string> = {
  'message/send': 'SendMessage',
  'message/stream': 'SendStreamingMessage',
  'tasks/get': 'GetTask',
  'tasks/cancel': 'CancelTask',
  'tasks/resubscribe': 'SubscribeToTask',
  'tasks/pushNotificationConfig/set': 'CreateTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/get': 'GetTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/list': 'ListTaskPushNotificationConfigs',
  'tasks/pushNotificationConfig/delete': 'DeleteTaskPushNotificationConfig',
};

/** The 1.0 call a 0.3 request is, or why it cannot be served. */
export function fromV03(call: JsonRpcCall): { ok: true; call: JsonRpcCall } | { ok: false; failure: A2aFailure } {
  const method = Object.hasOwn(METHODS, call.method) ? METHODS[call.method] : undefined;
  if (!method) return { ok: false, failure: { kind: 'method_not_found', method: call.method } };
  if (!isObject(call.params))
    return { ok: false, failure: { kind: 'invalid_params', detail: 'params must be an object' } };
  const params = pushParamsFromV03(method, call.params);
  if (params) return { ok: true, call: { ...call, method, params } };
  if (method !== 'SendMessage' && method !== 'SendStreamingMessage') return { ok: true, call: { ...call, method } };
  const { message, configuration, metadata } = call.params;
  if (!isObject(message)) return { ok: false, failure: { kind: 'invalid_params', detail: 'message is required' } };
  if (!Array.isArray(message.parts))
    return { ok: false, failure: { kind: 'invalid_params', detail: 'message.parts must be an array' } };
  const parts: Part[] = [];
  for (const part of message.parts) {
    const translated = partFromV03(part);
    if (!translated) return { ok: false, failure: { kind: 'invalid_params', detail: 'a part of an unknown kind' } };
    parts.push(translated);
  }
  const blocking = isObject(configuration) ? configuration.blocking !== false : true;
  // A config sent with the message: the task's, its id (unless given) the task's, as on 1.0.
  const push = isObject(configuration) ? configuration.pushNotificationConfig : undefined;
  return {
    ok: true,
    call: {
      ...call,
      method,
      params: {
        message: { ...message, role: message.role === 'user' ? 'ROLE_USER' : message.role, parts },
        configuration: {
          returnImmediately: !blocking,
          ...(push != null && { taskPushNotificationConfig: pushConfigFromV03(push) }),
        },
        ...(isObject(metadata) && { metadata }),
      },
    },
  };
}

/**
 * The 1.0 params of a 0.3 push config method; undefined for any other method. 0.3 names the task
 * `id` (set: `taskId`) and the config `pushNotificationConfigId`; a config made without an id, and
 * a get that names none, use the task's id (0.3's default: one config per task unless named).
 */
function pushParamsFromV03(method: string, params: Record<string, unknown>): Record<string, unknown> | undefined {
  switch (method) {
    case 'CreateTaskPushNotificationConfig': {
      const config = pushConfigFromV03(params.pushNotificationConfig);
      const taskId = params.taskId;
      return isObject(config) ? { ...config, taskId, id: config.id || taskId } : { taskId };
    }
    case 'GetTaskPushNotificationConfig':
      return { taskId: params.id, id: params.pushNotificationConfigId ?? params.id };
    case 'ListTaskPushNotificationConfigs':
      return { taskId: params.id };
    case 'DeleteTaskPushNotificationConfig':
      return { taskId: params.id, id: params.pushNotificationConfigId };
    default:
      return undefined;
  }
}

/**
 * A 0.3 `PushNotificationConfig` as 1.0's: `authentication.schemes` (a list) becomes `scheme`, the
 * first (one `Authorization` header carries one scheme; the SDK's translation keeps the first too).
 * Anything else passes as it came, for push/ to check (a non-object is refused there, -32602).
 */
function pushConfigFromV03(config: unknown): unknown {
  if (!isObject(config)) return config;
  const { authentication, ...rest } = config;
  if (!isObject(authentication)) return { ...rest, ...(authentication != null && { authentication }) };
  const { schemes, credentials } = authentication;
  const scheme = Array.isArray(schemes) ? schemes[0] : undefined;
  return { ...rest, authentication: { scheme, ...(credentials !== undefined && { credentials }) } };
}

function partFromV03(part: unknown): Part | undefined {
  if (!isObject(part)) return undefined;
  const metadata = isObject(part.metadata) ? { ...part.metadata } : undefined;
  if (part.kind === 'text') return { text: part.text as string, ...(metadata && { metadata }) };
  if (part.kind === 'data') {
    // A primitive or array travels wrapped, flagged (`data_part_compat`).
    const wrapped = metadata?.data_part_compat === true && isObject(part.data) && 'value' in part.data;
    if (metadata) delete metadata.data_part_compat;
    return { data: wrapped ? (part.data as { value: unknown }).value : part.data };
  }
  if (part.kind === 'file' && isObject(part.file)) {
    const { uri, bytes, name, mimeType } = part.file;
    const file = {
      ...(typeof name === 'string' && { filename: name }),
      ...(typeof mimeType === 'string' && { mediaType: mimeType }),
    };
    if (typeof uri === 'string') return { url: uri, ...file };
    if (typeof bytes === 'string') return { raw: bytes, ...file };
  }
  return undefined;
}

/** A 1.0 result (JSON text, as the 1.0 path rendered it) in 0.3's shape, for the 0.3 method asked. */
export function resultToV03(method: string, text: string): string {
  const value = JSON.parse(text) as Record<string, unknown>;
  switch (method) {
    case 'SendMessage':
      return JSON.stringify(streamResponseToV03(value));
    case 'CreateTaskPushNotificationConfig':
    case 'GetTaskPushNotificationConfig':
      return JSON.stringify(pushConfigToV03(value));
    case 'ListTaskPushNotificationConfigs':
      return JSON.stringify(((value.configs as unknown[] | undefined) ?? []).map(pushConfigToV03));
    case 'DeleteTaskPushNotificationConfig':
      return 'null';
    default:
      return JSON.stringify(taskToV03(value));
  }
}

/** A config as the 1.0 path reads it back (`{id, taskId, url, authentication?: {scheme}}`) in 0.3's shape. */
function pushConfigToV03(config: unknown): Record<string, unknown> {
  if (!isObject(config)) return {};
  const { taskId, authentication, ...rest } = config;
  const scheme = isObject(authentication) ? authentication.scheme : undefined;
  return {
    taskId,
    pushNotificationConfig: { ...rest, ...(typeof scheme === 'string' && { authentication: { schemes: [scheme] } }) },
  };
}

/** A StreamResponse (or SendMessageResponse) as the 0.3 event of its kind. */
export function streamResponseToV03(response: Record<string, unknown>): Record<string, unknown> {
  if (isObject(response.message)) return messageToV03(response.message);
  if (isObject(response.task)) return taskToV03(response.task);
  if (isObject(response.statusUpdate)) {
    const update = response.statusUpdate;
    const state = isObject(update.status) ? stateToV03(update.status.state) : 'unknown';
    return {
      kind: 'status-update',
      taskId: update.taskId,
      contextId: update.contextId,
      status: statusToV03(update.status),
      final: ['completed', 'failed', 'canceled', 'rejected', 'input-required', 'auth-required'].includes(state),
      ...(isObject(update.metadata) && { metadata: update.metadata }),
    };
  }
  if (isObject(response.artifactUpdate)) {
    const { artifact, ...rest } = response.artifactUpdate;
    return { kind: 'artifact-update', ...rest, artifact: artifactToV03(artifact) };
  }
  return response;
}

function messageToV03(message: Record<string, unknown>): Record<string, unknown> {
  return {
    ...message,
    kind: 'message',
    role: message.role === 'ROLE_USER' ? 'user' : 'agent',
    parts: (message.parts as Part[]).map(partToV03),
  };
}

export function taskToV03(task: Record<string, unknown>): Record<string, unknown> {
  return {
    ...task,
    kind: 'task',
    status: statusToV03(task.status),
    artifacts: ((task.artifacts as unknown[] | undefined) ?? []).map(artifactToV03),
    history: ((task.history as Record<string, unknown>[] | undefined) ?? []).map(messageToV03),
  };
}

function statusToV03(status: unknown): Record<string, unknown> {
  if (!isObject(status)) return { state: 'unknown' };
  return {
    ...status,
    state: stateToV03(status.state),
    ...(isObject(status.message) && { message: messageToV03(status.message) }),
  };
}

function artifactToV03(artifact: unknown): Record<string, unknown> {
  if (!isObject(artifact)) return {};
  return { ...artifact, parts: ((artifact.parts as Part[] | undefined) ?? []).map(partToV03) };
}

/** `TASK_STATE_INPUT_REQUIRED` → `input-required`. */
function stateToV03(state: unknown): string {
  return typeof state === 'string'
    ? state
        .replace(/^TASK_STATE_/, '')
        .toLowerCase()
        .replaceAll('_', '-')
    : 'unknown';
}

function partToV03(part: Part): Record<string, unknown> {
  const metadata = part.metadata && { metadata: part.metadata };
  if (part.text !== undefined) return { kind: 'text', text: part.text, ...metadata };
  if (part.data !== undefined) {
    if (isObject(part.data)) return { kind: 'data', data: part.data, ...metadata };
    return { kind: 'data', data: { value: part.data }, metadata: { ...part.metadata, data_part_compat: true } };
  }
  const file = {
    ...(part.filename && { name: part.filename }),
    ...(part.mediaType && { mimeType: part.mediaType }),
  };
  if (part.url !== undefined) return { kind: 'file', file: { uri: part.url, ...file }, ...metadata };
  return { kind: 'file', file: { bytes: part.raw ?? '', ...file }, ...metadata };
}
