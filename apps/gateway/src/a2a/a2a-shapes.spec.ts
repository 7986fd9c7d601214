import { describe, expect, it } from 'vitest';
import { a2aProblem, httpJsonError, jsonRpcError } from './a2a-errors';
import { httpJsonOperation } from './http-json-routes';
import { fromV03, resultToV03, streamResponseToV03 } from './compat-v03';
import { checkVersion, parseJsonRpc, requestedVersion, resultText } from './json-rpc';
import { chatMessageIdOf } from './message-ids';
import { parseSendMessage } from './send-message';

const message = (extra: Record<string, unknown> = {}) => ({
  message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }], metadata: { skill: 'echo' }, ...extra },
});

describe('parseSendMessage', () => {
  it('takes the first object data part as the arguments, else the text parts joined', () => {
    const data = parseSendMessage(
      message({ parts: [{ text: 'a' }, { data: [1] }, { data: { x: 1 } }, { data: { y: 2 } }] }),
    );
    expect(data).toMatchObject({ ok: true, send: { skill: 'echo', arguments: { x: 1 } } });
    const text = parseSendMessage(message({ parts: [{ text: 'a' }, { url: 'https://x' }, { text: 'b' }] }));
    expect(text).toMatchObject({ ok: true, send: { arguments: { text: 'a\nb' } } });
  });

  it('refuses what the surface relies on, without throwing', () => {
    for (const bad of [
      undefined,
      {},
      message({ messageId: '' }),
      message({ messageId: 'é' }),
      message({ role: 'ROLE_AGENT' }),
      message({ parts: [] }),
      message({ parts: [{ text: 'a', url: 'b' }] }),
      message({ parts: [{ text: 1 }] }),
      message({ metadata: { skill: 3 } }),
      message({ parts: [{ data: { idempotency_key: 'k' } }] }),
    ]) {
      expect(parseSendMessage(bad).ok).toBe(false);
    }
  });

  it('a message without a skill is conversational', () => {
    const parsed = parseSendMessage(message({ metadata: undefined }));
    expect(parsed.ok && parsed.send.skill).toBe(undefined);
  });
});

describe('the HTTP+JSON routes', () => {
  it('match the spec’s methods and paths, custom verbs included', () => {
    expect(httpJsonOperation('POST', '/message:send')).toEqual({ op: 'SendMessage' });
    expect(httpJsonOperation('POST', '/tasks/t%2F1:cancel')).toEqual({ op: 'CancelTask', taskId: 't/1' });
    expect(httpJsonOperation('GET', '/tasks/t1')).toEqual({ op: 'GetTask', taskId: 't1' });
    expect(httpJsonOperation('DELETE', '/tasks/t1/pushNotificationConfigs/c1')).toMatchObject({ configId: 'c1' });
    expect(httpJsonOperation('GET', '/message:send')).toBeUndefined();
    expect(httpJsonOperation('POST', '/tasks/t1:explode')).toBeUndefined();
  });
});

describe('JSON-RPC and versions', () => {
  it('reads one request, and splices a stored result in as it is', () => {
    expect(parseJsonRpc('{"jsonrpc":"2.0","id":7,"method":"SendMessage"}')).toMatchObject({
      ok: true,
      call: { id: 7 },
    });
    expect(parseJsonRpc('[]')).toMatchObject({ ok: false, failure: { kind: 'invalid_request' } });
    expect(parseJsonRpc('{"jsonrpc":"1.0","id":"a","method":"x"}')).toMatchObject({ ok: false, id: 'a' });
    expect(JSON.parse(resultText('a', '{"message":{}}'))).toEqual({ jsonrpc: '2.0', id: 'a', result: { message: {} } });
  });

  it('no header is 0.3; a binding serves the versions it lists', () => {
    expect(requestedVersion(undefined)).toBe('0.3');
    expect(requestedVersion('1')).toBe('1.0');
    expect(checkVersion('1.0')).toBeUndefined();
    expect(checkVersion('0.3')).toEqual({ kind: 'version_not_supported', version: '0.3' });
    expect(checkVersion('0.3', ['1.0', '0.3'])).toBeUndefined();
  });
});

describe('a2aProblem', () => {
  it('keeps the spec’s codes and writes both bindings from one problem', () => {
    const problem = a2aProblem({ kind: 'task_not_found', taskId: 't' }, 'req-1');
    expect(jsonRpcError(problem)).toEqual({
      code: -32001,
      message: 'Task not found: t',
      data: [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' },
      ],
    });
    expect(httpJsonError(problem).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
  });

  it('refusals of the request carry their HTTP status and headers on both bindings', () => {
    const problem = a2aProblem({ kind: 'unauthorized', status: 401, reason: 'no key', challenge: 'Bearer x' }, 'r');
    expect(problem).toMatchObject({
      status: 401,
      code: -32041,
      transport: true,
      headers: { 'www-authenticate': 'Bearer x' },
    });
    expect(a2aProblem({ kind: 'internal' }, 'r-9').message).toContain('r-9');
  });
});

describe('chatMessageIdOf', () => {
  it('is a v5 UUID, the same for the same caller and message, another for anyone else', () => {
    const id = chatMessageIdOf('agent', 'apikey:1', 'm-1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(chatMessageIdOf('agent', 'apikey:1', 'm-1')).toBe(id);
    expect(chatMessageIdOf('agent', 'apikey:2', 'm-1')).not.toBe(id);
    expect(chatMessageIdOf('other', 'apikey:1', 'm-1')).not.toBe(id);
  });
});

describe('url parts naming this gateway’s files', () => {
  const id = 'file_0123456789abcdef0123456789abcdef';
  it('become attachments, by id or by signed URL; other URLs stay out of the arguments', () => {
    const parsed = parseSendMessage(
      message({
        parts: [
          { url: id, filename: 'a.pdf', mediaType: 'application/pdf' },
          { url: `https://gw.example/api/v1/files/${id}/content?file=x&method=GET&expires=1&kid=k&sig=s` },
          { url: 'https://elsewhere.example/report.pdf' },
        ],
      }),
    );
    expect(parsed).toMatchObject({
      ok: true,
      send: {
        arguments: {
          attachments: [{ file_id: id, filename: 'a.pdf', content_type: 'application/pdf' }, { file_id: id }],
        },
      },
    });
    expect(parsed.ok && 'text' in parsed.send.arguments).toBe(false);
  });

  it('not beside attachments of the data part', () => {
    const parsed = parseSendMessage(message({ parts: [{ url: id }, { data: { attachments: [] } }] }));
    expect(parsed.ok).toBe(false);
  });
});

describe('A2A 0.3 compatibility', () => {
  it('translates message/send to SendMessage: kinds, roles, files, blocking', () => {
    const call = fromV03({
      id: 1,
      method: 'message/send',
      params: {
        message: {
          kind: 'message',
          messageId: 'm',
          role: 'user',
          metadata: { skill: 'echo' },
          parts: [
            { kind: 'text', text: 't' },
            { kind: 'data', data: { value: [1] }, metadata: { data_part_compat: true } },
            { kind: 'file', file: { uri: 'file_1', name: 'a.pdf', mimeType: 'application/pdf' } },
          ],
        },
        configuration: { blocking: false },
      },
    });
    expect(call).toEqual({
      ok: true,
      call: {
        id: 1,
        method: 'SendMessage',
        params: {
          message: expect.objectContaining({
            role: 'ROLE_USER',
            parts: [{ text: 't' }, { data: [1] }, { url: 'file_1', filename: 'a.pdf', mediaType: 'application/pdf' }],
          }),
          configuration: { returnImmediately: true },
        },
      },
    });
  });

  it('translates the push config methods and a config sent with message/send, both ways', () => {
    const config = {
      url: 'https://h/x',
      token: 't',
      authentication: { schemes: ['Bearer', 'Basic'], credentials: 'c' },
    };
    const translated = (method: string, params: unknown) => {
      const call = fromV03({ id: 1, method, params });
      return call.ok ? { method: call.call.method, params: call.call.params } : call.failure;
    };
    expect(
      translated('tasks/pushNotificationConfig/set', { taskId: 'call_1', pushNotificationConfig: config }),
    ).toEqual({
      method: 'CreateTaskPushNotificationConfig',
      // No id: the task's (0.3's default); one scheme, the first.
      params: {
        taskId: 'call_1',
        id: 'call_1',
        url: 'https://h/x',
        token: 't',
        authentication: { scheme: 'Bearer', credentials: 'c' },
      },
    });
    expect(translated('tasks/pushNotificationConfig/get', { id: 'call_1' })).toEqual({
      method: 'GetTaskPushNotificationConfig',
      params: { taskId: 'call_1', id: 'call_1' },
    });
    expect(translated('tasks/pushNotificationConfig/get', { id: 'call_1', pushNotificationConfigId: 'a' })).toEqual({
      method: 'GetTaskPushNotificationConfig',
      params: { taskId: 'call_1', id: 'a' },
    });
    expect(translated('tasks/pushNotificationConfig/list', { id: 'call_1' })).toEqual({
      method: 'ListTaskPushNotificationConfigs',
      params: { taskId: 'call_1' },
    });
    expect(translated('tasks/pushNotificationConfig/delete', { id: 'call_1', pushNotificationConfigId: 'a' })).toEqual({
      method: 'DeleteTaskPushNotificationConfig',
      params: { taskId: 'call_1', id: 'a' },
    });
    expect(translated('tasks/pushNotificationConfig/set', [])).toMatchObject({ kind: 'invalid_params' });
    expect(translated('tasks/pushNotificationConfig/nope', {})).toMatchObject({ kind: 'method_not_found' });
    expect(translated('toString', {})).toMatchObject({ kind: 'method_not_found' });
    const send = translated('message/send', {
      message: { messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 't' }] },
      configuration: { pushNotificationConfig: config },
    });
    expect(send).toMatchObject({
      params: {
        configuration: {
          returnImmediately: false,
          taskPushNotificationConfig: { url: 'https://h/x', authentication: { scheme: 'Bearer' } },
        },
      },
    });

    const read = { id: 'a', taskId: 'call_1', url: 'https://h/x', authentication: { scheme: 'Bearer' } };
    const v03 = {
      taskId: 'call_1',
      pushNotificationConfig: { id: 'a', url: 'https://h/x', authentication: { schemes: ['Bearer'] } },
    };
    expect(JSON.parse(resultToV03('GetTaskPushNotificationConfig', JSON.stringify(read)))).toEqual(v03);
    expect(JSON.parse(resultToV03('ListTaskPushNotificationConfigs', JSON.stringify({ configs: [read] })))).toEqual([
      v03,
    ]);
    expect(resultToV03('DeleteTaskPushNotificationConfig', '{}')).toBe('null');
  });

  it('answers in 0.3’s shape: kind, lower-case roles and states, final status updates', () => {
    const message = JSON.parse(
      resultToV03(
        'SendMessage',
        JSON.stringify({ message: { messageId: 'c', role: 'ROLE_AGENT', parts: [{ text: 'hi' }, { data: 3 }] } }),
      ),
    );
    expect(message).toEqual({
      kind: 'message',
      messageId: 'c',
      role: 'agent',
      parts: [
        { kind: 'text', text: 'hi' },
        { kind: 'data', data: { value: 3 }, metadata: { data_part_compat: true } },
      ],
    });
    const task = JSON.parse(
      resultToV03('GetTask', JSON.stringify({ id: 't', status: { state: 'TASK_STATE_INPUT_REQUIRED' } })),
    );
    expect(task).toMatchObject({ kind: 'task', status: { state: 'input-required' }, artifacts: [], history: [] });
    expect(
      streamResponseToV03({ statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } } }),
    ).toMatchObject({ kind: 'status-update', final: false, status: { state: 'working' } });
  });
});
