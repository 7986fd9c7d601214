import { Module } from '@nestjs/common';
import { AgentsStore } from './agents.store';
import { RegistryMsController } from './registry-ms.controller';
import { RegistryService } from './registry.service';

/** Agents and their registered skills; pods register over the bus. */
@Module({ controllers: [RegistryMsController], providers: [AgentsStore, RegistryService], exports: [AgentsStore] })
export class AgentsModule {}
