import { Module } from '@nestjs/common';
import { CatalogueModule } from '../catalogue/catalogue.module';
import { CallPipeline } from './call-pipeline.service';

@Module({ imports: [CatalogueModule], providers: [CallPipeline], exports: [CallPipeline] })
export class CallsModule {}
