import { Module } from '@nestjs/common';
import { ResumableStreams } from './resumable-streams.service';
import { StreamStore } from './streams.store';

/** Resumable SSE streams of sessions: events in PostgreSQL, resumed on any replica (README.md). */
@Module({
  providers: [StreamStore, ResumableStreams],
  exports: [ResumableStreams],
})
export class StreamsModule {}
