import { Injectable } from '@nestjs/common';
import {
  CALL_ID_PATTERN,
  InvalidRequestError,
  NotFoundError,
  messageIdOfCall,
  parseListCalls,
  parseListChannels,
  parseShowChannel,
  type BusPattern,
  type BusResponse,
  type StoredCall,
} from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';
import { ConversationsStore } from './conversations.store';

/** A caller's own call id may name many calls: `admin call show` gets the newest. */
const MAX_CALLS_FOUND = 20;
/** What a page of a channel's calls may take of the bus's `max_payload`: the rest is for the channel and framing. */
const PAGE_SHARE_OF_PAYLOAD = 0.75;

/**
 * The operator's views of calls and channels (README.md beside this file).
 * Every input is checked here (`@mcpgw/contracts` conversations.ts), whether
 * it came over the bus (typed, but from another process) or the REST mirror
 * (strings). Each page is `limit` rows; one more is read to tell whether
 * there are more.
 */
@Injectable()
export class ConversationsService {
  constructor(
    private readonly store: ConversationsStore,
    private readonly bus: BusClient,
  ) {}

  /** A call by its id (`admin call show`): its chat_message(s), newest first, with their replies. */
  findCall(callId: unknown): Promise<StoredCall[]> {
    if (typeof callId !== 'string' || !CALL_ID_PATTERN.test(callId)) {
      throw new InvalidRequestError('call_id must be 1 to 128 printable ASCII characters, no spaces');
    }
    return this.store.findCall(callId, messageIdOfCall(callId), MAX_CALLS_FOUND);
  }

  async listCalls(fields: Record<string, unknown>): Promise<BusResponse<typeof BusPattern.ListCalls>> {
    const request = parseListCalls(fields);
    const calls = await this.store.listCalls(request, request.limit + 1);
    return { calls: calls.slice(0, request.limit), more: calls.length > request.limit };
  }

  async listChannels(fields: Record<string, unknown>): Promise<BusResponse<typeof BusPattern.ListChannels>> {
    const request = parseListChannels(fields);
    const channels = await this.store.listChannels(request, request.limit + 1);
    return { channels: channels.slice(0, request.limit), more: channels.length > request.limit };
  }

  /**
   * A channel's chat_messages with their replies, newest first: `limit` of
   * them, or fewer when more would not fit on the bus (the first always goes).
   */
  async showChannel(fields: Record<string, unknown>): Promise<BusResponse<typeof BusPattern.ShowChannel>> {
    const { channel_id: channelId, before, limit } = parseShowChannel(fields);
    const channel = await this.store.channel(channelId);
    if (!channel) throw new NotFoundError(`no channel ${channelId}`);
    const found = await this.store.channelCalls(channelId, before, limit + 1);
    const calls = this.fitting(found.slice(0, limit));
    return { channel, calls, more: found.length > calls.length };
  }

  private fitting(calls: StoredCall[]): StoredCall[] {
    let room = Math.floor(this.bus.maxPayload() * PAGE_SHARE_OF_PAYLOAD);
    const kept: StoredCall[] = [];
    for (const call of calls) {
      room -= Buffer.byteLength(JSON.stringify(call));
      if (room < 0 && kept.length > 0) break;
      kept.push(call);
    }
    return kept;
  }
}
