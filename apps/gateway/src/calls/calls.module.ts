import { Module } from '@nestjs/common';
import { CancellationModule } from '../cancellation/cancellation.module';
import { CatalogueModule } from '../catalogue/catalogue.module';
import { CallPipeline } from './call-pipeline.service';

@Module({
  imports: [CatalogueModule, CancellationModule],
  providers: [CallPipeline],
  exports: [CallPipeline, CancellationModule],
})
export class CallsModule {}
