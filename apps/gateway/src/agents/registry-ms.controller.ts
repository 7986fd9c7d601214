import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { BusPattern } from '@mcpgw/contracts';
import { RegistryService } from './registry.service';

/** The registry's bus API. */
@Controller()
export class RegistryMsController {
  constructor(private readonly registry: RegistryService) {}

  @MessagePattern(BusPattern.RegisterAgent)
  register(@Payload() request: unknown) {
    return this.registry.register(request);
  }
}
