import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module';
import { ToolCatalogueService } from './tool-catalogue.service';

@Module({ imports: [AgentsModule], providers: [ToolCatalogueService], exports: [ToolCatalogueService] })
export class CatalogueModule {}
