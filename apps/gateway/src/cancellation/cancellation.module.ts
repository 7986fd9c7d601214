import { Module } from '@nestjs/common';
import { CallCancellation } from './call-cancellation.service';
import { CallCancelledController } from './call-cancelled.controller';
import { InFlightCalls } from './in-flight-calls.service';

/** Cancelling calls on this replica and across replicas; see README.md. */
@Module({
  controllers: [CallCancelledController],
  providers: [InFlightCalls, CallCancellation],
  exports: [InFlightCalls, CallCancellation],
})
export class CancellationModule {}
