import { Controller, Get, Req } from '@nestjs/common';
import { AuditStore } from '../../audit/audit.store';
import { listAudit, type AuditPage } from '../../admin/operations/audit';
import type { AdminRequest } from '../admin-token.guard';
import { knownQuery } from '../request-query';

/** The audit trail (the CLI's `audit list`), newest first, paged by `before`. */
@Controller('admin/v1/audit')
export class AuditController {
  constructor(private readonly audit: AuditStore) {}

  @Get()
  list(@Req() request: AdminRequest): Promise<AuditPage> {
    const query = knownQuery(request, [
      'kind',
      'caller',
      'agent',
      'tool',
      'outcome',
      'since',
      'until',
      'limit',
      'before',
    ]);
    return listAudit(this.audit, query as Record<string, string | undefined>);
  }
}
