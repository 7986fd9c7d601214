import { Global, Module } from '@nestjs/common';
import { AuditExport } from './audit-export';
import { AuditRetention } from './audit-retention';
import { AuditTrail } from './audit-trail.service';
import { AuditWriter } from './audit-writer.service';
import { AuditStore } from './audit.store';

/** The audit trail (README.md here): global, so that any module tells it what happened. */
@Global()
@Module({
  providers: [AuditStore, AuditExport, AuditWriter, AuditTrail, AuditRetention],
  exports: [AuditTrail, AuditStore],
})
export class AuditModule {}
