import { Module } from '@nestjs/common';
import { CallsModule } from '../calls/calls.module';
import { IdempotencyStore } from './idempotency.store';
import { IdempotentCalls } from './idempotent-calls.service';

@Module({ imports: [CallsModule], providers: [IdempotencyStore, IdempotentCalls], exports: [IdempotentCalls] })
export class IdempotencyModule {}
