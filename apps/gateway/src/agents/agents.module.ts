import { Module } from '@nestjs/common';
import { ToolPinningModule } from '../tool-pinning/tool-pinning.module';
import { AgentsStore } from './agents.store';
import { PodsStore } from './pods.store';
import { PresenceRecorder } from './presence.recorder';
import { RegistryMsController } from './registry-ms.controller';
import { RegistryService } from './registry.service';

/** Agents and their registered skills; pods register over the bus and say they are up (presence). */
@Module({
  imports: [ToolPinningModule],
  controllers: [RegistryMsController],
  providers: [AgentsStore, PodsStore, RegistryService, PresenceRecorder],
  exports: [AgentsStore, PodsStore],
})
export class AgentsModule {}
