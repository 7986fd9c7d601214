import { Controller, Get, Param, Req } from '@nestjs/common';
import { BusClient } from '@mcpgw/bus';
import type { FastifyRequest } from 'fastify';
import { IdempotencyStore } from '../../idempotency/idempotency.store';
import { listCalls, showCall, type CallFound, type CallPage } from '../../admin/operations/calls';
import { knownQuery } from '../request-query';

/** Recent tool calls, filtered, and one call with both its messages and its hops (the CLI's `call list|show`). */
@Controller('admin/v1/calls')
export class CallsController {
  constructor(
    private readonly bus: BusClient,
    private readonly idempotency: IdempotencyStore,
  ) {}

  @Get()
  list(@Req() request: FastifyRequest): Promise<CallPage> {
    return listCalls(this.bus, knownQuery(request, ['agent_id', 'tool', 'caller_id', 'outcome', 'before', 'limit']));
  }

  @Get(':callId')
  show(@Param('callId') callId: string): Promise<CallFound> {
    return showCall(this.bus, this.idempotency, callId);
  }
}
