import { All, Controller, Logger, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { whenClientLeaves } from '../cancellation/client-disconnect';
import { jsonDeeperThan, TOO_DEEP_MESSAGE } from '../mcp/transport/json-depth';
import type { Caller } from '../auth/caller';
import { A2aAuthenticator, type A2aAuthenticated } from './a2a-authenticator.service';
import { a2aProblem, httpJsonError, type A2aFailure } from './a2a-errors';
import { A2aMessages } from './a2a-messages.service';
import { A2aTasks } from './a2a-tasks.service';
import { A2aPush } from './push/a2a-push.service';
import { writeEventStream } from './event-stream';
import { A2aTaskStreams, streamed, type StreamRun } from './task-stream.service';
import { httpJsonOperation, type HttpJsonOperation } from './http-json-routes';
import { checkVersion, requestedVersion } from './json-rpc';
import { parseSendMessage } from './send-message';
import { A2A_VERSION, A2A_VERSION_HEADER } from './wire';

type Answer = { ok: true; text: string } | { ok: true; stream: StreamRun } | { ok: false; failure: A2aFailure };

/**
 * The HTTP+JSON binding under `/a2a/{agent_id}/rest` (an agent API key or OAuth
 * token) and `/workspaces/{ws}/agents/{agent_id}/a2a/rest` (a RuntimeGrant):
 * guards in order (credential, version, route, body), then one dispatch on the
 * operation (http-json-routes.ts); every failure is answered through `a2aProblem`.
 */
@Controller()
export class A2aHttpJsonController {
  private readonly logger = new Logger(A2aHttpJsonController.name);

  constructor(
    private readonly auth: A2aAuthenticator,
    private readonly messages: A2aMessages,
    private readonly tasks: A2aTasks,
    private readonly streams: A2aTaskStreams,
    private readonly push: A2aPush,
  ) {}

  @All('a2a/:agentId/rest/*')
  async byKey(@Param('agentId') agentId: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    await this.answer(req, reply, () => this.auth.ofAgent(agentId, req));
  }

  @All('workspaces/:workspaceId/agents/:agentId/a2a/rest/*')
  async byGrant(
    @Param('workspaceId') workspaceId: string,
    @Param('agentId') agentId: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    await this.answer(req, reply, () => this.auth.ofGrant(workspaceId, agentId, req));
  }

  private async answer(req: FastifyRequest, reply: FastifyReply, authenticate: () => Promise<A2aAuthenticated>) {
    try {
      const auth = await authenticate();
      if (!auth.ok) return this.fail(req, reply, auth.failure);
      // HTTP+JSON is served in 1.0 only (0.3's paths differ); 0.3 clients use JSON-RPC.
      const wrongVersion = checkVersion(requestedVersion(req.headers[A2A_VERSION_HEADER]));
      if (wrongVersion) return this.fail(req, reply, wrongVersion);
      const path = `/${(req.params as Record<string, string>)['*'] ?? ''}`;
      const operation = httpJsonOperation(req.method, path);
      if (!operation) return this.fail(req, reply, { kind: 'method_not_found', method: `${req.method} ${path}` });
      const answer = await this.dispatch(auth.caller, operation, req, reply);
      if (!answer.ok) return this.fail(req, reply, answer.failure);
      if (reply.sent || reply.raw.destroyed) return;
      if ('stream' in answer) return await writeEventStream(reply, answer.stream, 'http-json');
      void reply.status(200).headers(jsonHeaders()).send(answer.text);
    } catch (error) {
      this.logger.error({
        msg: 'unhandled error on the A2A surface',
        request_id: req.id,
        error: (error as Error).message,
      });
      this.fail(req, reply, { kind: 'internal' });
    }
  }

  private async dispatch(
    caller: Caller,
    operation: HttpJsonOperation,
    req: FastifyRequest,
    reply: FastifyReply,
  ): Promise<Answer> {
    switch (operation.op) {
      case 'SendMessage': {
        const body = readBody(String(req.body ?? ''));
        if (!body.ok) return body;
        const parsed = parseSendMessage(body.value);
        if (!parsed.ok) return { ok: false, failure: { kind: 'invalid_params', detail: parsed.detail } };
        const signal = whenClientLeaves(reply);
        return this.messages.send(caller, parsed.send, { requestId: req.id, signal });
      }
      case 'SendStreamingMessage': {
        const body = readBody(String(req.body ?? ''));
        if (!body.ok) return body;
        const parsed = parseSendMessage(body.value);
        if (!parsed.ok) return { ok: false, failure: { kind: 'invalid_params', detail: parsed.detail } };
        return streamed(await this.messages.stream(caller, parsed.send, { requestId: req.id }));
      }
      case 'SubscribeToTask':
        return streamed(await this.streams.subscribe(caller, operation.taskId));
      case 'GetTask':
        return this.tasks.get(caller, operation.taskId);
      case 'CancelTask':
        return this.tasks.cancel(caller, operation.taskId);
      case 'ListTasks': {
        const query = req.query as Record<string, string | undefined>;
        return this.tasks.list(caller, { pageSize: query.pageSize, pageToken: query.pageToken });
      }
      case 'CreateTaskPushNotificationConfig': {
        const body = readBody(String(req.body ?? ''));
        return body.ok ? this.push.create(caller, body.value, { taskIdOfPath: operation.taskId }) : body;
      }
      case 'GetTaskPushNotificationConfig':
        return this.push.get(caller, operation.taskId, operation.configId);
      case 'ListTaskPushNotificationConfigs':
        return this.push.list(caller, operation.taskId);
      case 'DeleteTaskPushNotificationConfig':
        return this.push.remove(caller, operation.taskId, operation.configId);
      case 'GetExtendedAgentCard':
        return { ok: false, failure: { kind: 'extended_card_not_configured' } };
    }
  }

  private fail(req: FastifyRequest, reply: FastifyReply, failure: A2aFailure): void {
    if (reply.sent || reply.raw.destroyed) return;
    const problem = a2aProblem(failure, req.id);
    void reply
      .status(problem.status)
      .headers({ ...jsonHeaders(), ...problem.headers })
      .send(JSON.stringify(httpJsonError(problem)));
  }
}

function readBody(text: string): { ok: true; value: unknown } | { ok: false; failure: A2aFailure } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, failure: { kind: 'parse', detail: 'the body is not valid JSON' } };
  }
  if (jsonDeeperThan(text)) return { ok: false, failure: { kind: 'invalid_request', detail: TOO_DEEP_MESSAGE } };
  return { ok: true, value };
}

function jsonHeaders() {
  return { 'content-type': 'application/json', [A2A_VERSION_HEADER]: A2A_VERSION };
}
