import { Inject, Injectable } from '@nestjs/common';
import { BusPattern, type AgentReply, type ChatMessage, type ContentItemDto } from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { AGENT_POD_ENV, type AgentPodEnv } from '../config/agent-pod.env';
import type { SkillOutput } from '../skills/skill';

const ATTEMPTS = 3;

/** Turns a skill's output into an `agent_reply` and stores it through the message service. */
@Injectable()
export class ReplierService {
  constructor(
    private readonly bus: BusClient,
    @Inject(AGENT_POD_ENV) private readonly env: AgentPodEnv,
  ) {}

  /** Resolves once the reply is stored; the caller acks the inbox message only then. */
  async reply(message: ChatMessage, output: SkillOutput): Promise<void> {
    const reply: AgentReply = {
      type: 'agent_reply',
      id: randomUUID(),
      channel_id: message.channel_id!,
      agent_id: message.agent_id,
      in_reply_to: message.id,
      created_at: new Date().toISOString(),
      content: output.content as ContentItemDto[],
      structured_content: output.structured,
      is_error: output.isError || undefined,
      meta: { pod_id: this.env.POD_ID },
    };
    for (let attempt = 1; ; attempt++) {
      try {
        await this.bus.request(BusPattern.PostMessage, { envelope: reply });
        return;
      } catch (error) {
        if (attempt >= ATTEMPTS) throw error;
        await delay(200 * attempt);
      }
    }
  }

  history(message: ChatMessage) {
    return this.bus
      .request(BusPattern.ListMessages, { channel_id: message.channel_id!, limit: 200 })
      .then((page) => page.messages);
  }
}
