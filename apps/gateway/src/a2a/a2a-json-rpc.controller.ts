import { Controller, Logger, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { whenClientLeaves } from '../cancellation/client-disconnect';
import type { Caller } from '../auth/caller';
import { A2aAuthenticator, type A2aAuthenticated } from './a2a-authenticator.service';
import { a2aProblem, jsonRpcError, type A2aFailure } from './a2a-errors';
import { A2aMessages } from './a2a-messages.service';
import { A2aTasks } from './a2a-tasks.service';
import { A2aPush } from './push/a2a-push.service';
import { writeEventStream } from './event-stream';
import { A2aTaskStreams, streamed, type StreamRun } from './task-stream.service';
import { checkVersion, parseJsonRpc, requestedVersion, resultText, type JsonRpcCall, type JsonRpcId } from './json-rpc';
import { fromV03, LEGACY_VERSION, resultToV03, streamResponseToV03 } from './compat-v03';
import { isObject, parseSendMessage } from './send-message';
import { A2A_VERSION, A2A_VERSION_HEADER } from './wire';

type Answer = { ok: true; text: string } | { ok: true; stream: StreamRun } | { ok: false; failure: A2aFailure };

/**
 * The JSON-RPC binding: `POST /a2a/{agent_id}` (an agent API key or OAuth token)
 * and its RuntimeGrant twin `POST /workspaces/{ws}/agents/{agent_id}/a2a`.
 * Guards in order (credential, body, version), then one dispatch on the method;
 * every failure is answered through `a2aProblem`.
 */
@Controller()
export class A2aJsonRpcController {
  private readonly logger = new Logger(A2aJsonRpcController.name);

  constructor(
    private readonly auth: A2aAuthenticator,
    private readonly messages: A2aMessages,
    private readonly tasks: A2aTasks,
    private readonly streams: A2aTaskStreams,
    private readonly push: A2aPush,
  ) {}

  @Post('a2a/:agentId')
  async byKey(@Param('agentId') agentId: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    await this.answer(req, reply, () => this.auth.ofAgent(agentId, req));
  }

  @Post('workspaces/:workspaceId/agents/:agentId/a2a')
  async byGrant(
    @Param('workspaceId') workspaceId: string,
    @Param('agentId') agentId: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    await this.answer(req, reply, () => this.auth.ofGrant(workspaceId, agentId, req));
  }

  private async answer(req: FastifyRequest, reply: FastifyReply, authenticate: () => Promise<A2aAuthenticated>) {
    let id: JsonRpcId = null;
    try {
      const auth = await authenticate();
      if (!auth.ok) return this.fail(req, reply, id, auth.failure);
      const parsed = parseJsonRpc(String(req.body ?? ''));
      if (!parsed.ok) return this.fail(req, reply, parsed.id, parsed.failure);
      id = parsed.call.id;
      const version = requestedVersion(req.headers[A2A_VERSION_HEADER]);
      const wrongVersion = checkVersion(version, [A2A_VERSION, LEGACY_VERSION]);
      if (wrongVersion) return this.fail(req, reply, id, wrongVersion);
      const legacy = version === LEGACY_VERSION;
      const call = legacy ? fromV03(parsed.call) : ({ ok: true, call: parsed.call } as const);
      if (!call.ok) return this.fail(req, reply, id, call.failure, version);
      const answer = await this.dispatch(auth.caller, call.call, req, reply, legacy);
      if (!answer.ok) return this.fail(req, reply, id, answer.failure, version);
      if (reply.sent || reply.raw.destroyed) return;
      if ('stream' in answer) {
        const run: StreamRun = legacy
          ? (sink, signal) => answer.stream((response) => sink(streamResponseToV03(response)), signal)
          : answer.stream;
        return await writeEventStream(reply, run, { rpcId: id }, version);
      }
      const text = legacy ? resultToV03(call.call.method, answer.text) : answer.text;
      void reply.status(200).headers(jsonHeaders(version)).send(resultText(id, text));
    } catch (error) {
      this.logger.error({
        msg: 'unhandled error on the A2A surface',
        request_id: req.id,
        error: (error as Error).message,
      });
      this.fail(req, reply, id, { kind: 'internal' });
    }
  }

  /** `legacy`: the call was translated from A2A 0.3 (push configs it makes hear 0.3's body). */
  private async dispatch(
    caller: Caller,
    call: JsonRpcCall,
    req: FastifyRequest,
    reply: FastifyReply,
    legacy: boolean,
  ): Promise<Answer> {
    switch (call.method) {
      case 'SendMessage': {
        const parsed = parseSendMessage(call.params);
        if (!parsed.ok) return { ok: false, failure: { kind: 'invalid_params', detail: parsed.detail } };
        const signal = whenClientLeaves(reply);
        return this.messages.send(caller, parsed.send, { requestId: req.id, signal, legacy });
      }
      case 'SendStreamingMessage': {
        const parsed = parseSendMessage(call.params);
        if (!parsed.ok) return { ok: false, failure: { kind: 'invalid_params', detail: parsed.detail } };
        return streamed(await this.messages.stream(caller, parsed.send, { requestId: req.id, legacy }));
      }
      case 'SubscribeToTask':
        return streamed(await this.streams.subscribe(caller, paramOf(call.params, 'id')));
      case 'GetTask':
        return this.tasks.get(caller, paramOf(call.params, 'id'));
      case 'CancelTask':
        return this.tasks.cancel(caller, paramOf(call.params, 'id'));
      case 'ListTasks':
        return this.tasks.list(caller, {
          pageSize: paramOf(call.params, 'pageSize'),
          pageToken: paramOf(call.params, 'pageToken'),
        });
      case 'CreateTaskPushNotificationConfig':
        return this.push.create(caller, call.params, { legacy });
      case 'GetTaskPushNotificationConfig':
        return this.push.get(caller, paramOf(call.params, 'taskId'), paramOf(call.params, 'id'));
      case 'ListTaskPushNotificationConfigs':
        return this.push.list(caller, paramOf(call.params, 'taskId'));
      case 'DeleteTaskPushNotificationConfig':
        return this.push.remove(caller, paramOf(call.params, 'taskId'), paramOf(call.params, 'id'));
      case 'GetExtendedAgentCard':
        return { ok: false, failure: { kind: 'extended_card_not_configured' } };
      default:
        return { ok: false, failure: { kind: 'method_not_found', method: call.method } };
    }
  }

  /** A JSON-RPC error: HTTP 200, unless the request itself was refused (credentials, quota: their status). */
  private fail(
    req: FastifyRequest,
    reply: FastifyReply,
    id: JsonRpcId,
    failure: A2aFailure,
    version: string = A2A_VERSION,
  ): void {
    if (reply.sent || reply.raw.destroyed) return;
    const problem = a2aProblem(failure, req.id);
    void reply
      .status(problem.transport ? problem.status : 200)
      .headers({ ...jsonHeaders(version), ...problem.headers })
      .send(JSON.stringify({ jsonrpc: '2.0', id, error: jsonRpcError(problem) }));
  }
}

function paramOf(params: unknown, name: string): unknown {
  return isObject(params) ? params[name] : undefined;
}

function jsonHeaders(version: string = A2A_VERSION) {
  return { 'content-type': 'application/json', [A2A_VERSION_HEADER]: version };
}
