import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import { BusPattern, agentOfSubject } from '@mcpgw/contracts';
import { BUS_OPTIONS, BusContext, type BusOptions } from '@mcpgw/bus';
import { RegistryService } from './registry.service';

/**
 * The registry's bus API. A pod registers on a subject that names its agent
 * (`registry.agents.<agent>.register`), which only that agent's NATS
 * credentials may publish to: the registration must be for that agent.
 */
@Controller()
export class RegistryMsController {
  constructor(
    private readonly registry: RegistryService,
    @Inject(BUS_OPTIONS) private readonly bus: BusOptions,
  ) {}

  @MessagePattern(BusPattern.RegisterAgent)
  register(@Payload() request: unknown, @Ctx() ctx: BusContext) {
    return this.registry.register(request, agentOfSubject(this.bus.prefix, BusPattern.RegisterAgent, ctx.subject));
  }
}
