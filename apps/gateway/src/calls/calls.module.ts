import { Module } from '@nestjs/common';
import { CancellationModule } from '../cancellation/cancellation.module';
import { CatalogueModule } from '../catalogue/catalogue.module';
import { FilesModule } from '../files/files.module';
import { CallPipeline } from './call-pipeline.service';
import { ReplyWaits } from './reply-waits.service';

@Module({
  imports: [CatalogueModule, CancellationModule, FilesModule],
  providers: [CallPipeline, ReplyWaits],
  exports: [CallPipeline, CancellationModule],
})
export class CallsModule {}
