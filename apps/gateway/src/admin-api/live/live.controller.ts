import { Body, Controller, Get, Inject, Optional, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { InvalidRequestError } from '@mcpgw/contracts';
import { AdminApiError } from '../admin-api-errors';
import type { AdminRequest } from '../admin-token.guard';
import { objectBody } from '../request-body';
import { ADMIN_LIVE, type AdminLive } from './admin-live.module';
import { SSE_HEARTBEAT_MS, LiveStreams } from './sse-stream';

/**
 * The console's live routes (README.md here), both `text/event-stream`: a
 * playground call that streams its progress and result, and the activity of
 * every gateway replica as it happens.
 */
@Controller('admin/v1')
export class LiveController {
  constructor(
    private readonly streams: LiveStreams,
    @Optional() @Inject(ADMIN_LIVE) private readonly live?: AdminLive,
  ) {}

  /**
   * Call a tool as the operator. Refusals (no such agent or tool, bad
   * arguments, CSRF) are JSON with their status, before the stream opens; then
   * `started`, `progress`/`log`/`notice`, and `result` or `error`.
   */
  @Post('agents/:agentId/playground/calls')
  async call(
    @Param('agentId') agentId: string,
    @Body() body: unknown,
    @Req() request: AdminRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const live = this.required();
    const { tool, arguments: given = {} } = objectBody(body, ['tool', 'arguments']);
    if (typeof tool !== 'string' || tool.length === 0 || tool.length > 128)
      throw new InvalidRequestError('tool: the name of one of the agent’s tools');
    if (typeof given !== 'object' || given === null || Array.isArray(given))
      throw new InvalidRequestError('arguments: a JSON object');
    const args = given as Record<string, unknown>;
    await live.playground.check(agentId, tool, args);

    const stream = this.streams.start(reply);
    const abort = new AbortController();
    // The browser left (or the drain ended the stream): the agent is told to stop.
    stream.onClose(() => abort.abort());
    const sink = {
      started: (ids: object) => stream.send('started', ids),
      event: (name: string, data: object) => stream.send(name, data),
      result: (json: string) => stream.end('result', json),
      error: (data: object) => stream.end('error', data),
    };
    const call = { agentId, tokenId: request.adminTokenId!, tool, arguments: args, requestId: String(request.id) };
    await live.playground.run(call, sink, abort.signal).catch(() => {
      stream.end('error', { call_id: null, code: 'internal', message: 'internal error' });
    });
    stream.end();
  }

  /**
   * What happens on every gateway replica, as it happens: `ready` once
   * listening, then `call` (a call ended: each replica tells its calls once a
   * second), `unlisted` (calls a busy second did not list, only counted) and
   * `registration` (a pod registered); a comment line every 15 s; `bye` when
   * this gateway stops.
   */
  @Get('events')
  async events(@Res() reply: FastifyReply): Promise<void> {
    const live = this.required();
    const stream = this.streams.start(reply);
    const stop = await live.activity.listen((event) => {
      if (event.kind === 'registration') {
        const { kind, ...registration } = event;
        return stream.send(kind, registration);
      }
      for (const call of event.calls) stream.send('call', call);
      if (event.unlisted.calls > 0) stream.send('unlisted', event.unlisted);
    });
    stream.onClose(stop);
    stream.send('ready', { heartbeat_ms: SSE_HEARTBEAT_MS });
  }

  private required(): AdminLive {
    if (!this.live) throw new AdminApiError(503, 'unavailable', 'no call path in this management API');
    return this.live;
  }
}
