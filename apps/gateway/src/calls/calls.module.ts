import { Module } from '@nestjs/common';
import { CatalogueModule } from '../catalogue/catalogue.module';
import { CallPipeline } from './call-pipeline.service';
import { CallsMsController } from './calls-ms.controller';
import { InFlightCalls } from './in-flight-calls.service';

@Module({
  imports: [CatalogueModule],
  controllers: [CallsMsController],
  providers: [CallPipeline, InFlightCalls],
  exports: [CallPipeline, InFlightCalls],
})
export class CallsModule {}
