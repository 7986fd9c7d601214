import { Controller, Get, Param, Req } from '@nestjs/common';
import { BusClient } from '@mcpgw/bus';
import type { FastifyRequest } from 'fastify';
import { listChannels, showChannel, type ChannelPage, type Conversation } from '../../admin/operations/calls';
import { knownQuery } from '../request-query';

/** Channels (the message service's conversations) and one channel's turns, each message with its reply and hops. */
@Controller('admin/v1/channels')
export class ChannelsController {
  constructor(private readonly bus: BusClient) {}

  @Get()
  list(@Req() request: FastifyRequest): Promise<ChannelPage> {
    return listChannels(this.bus, knownQuery(request, ['agent_id', 'before', 'limit']));
  }

  @Get(':channelId/messages')
  messages(@Param('channelId') channelId: string, @Req() request: FastifyRequest): Promise<Conversation> {
    return showChannel(this.bus, channelId, knownQuery(request, ['before', 'limit']));
  }
}
