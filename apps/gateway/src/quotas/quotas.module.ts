import { Module } from '@nestjs/common';
import { AgentQuotasStore } from './agent-quotas.store';
import { QuotaGossipController } from './quota-gossip.controller';
import { QuotaGossipService } from './quota-gossip.service';
import { QuotaLimitsService } from './quota-limits.service';
import { QuotasService } from './quotas.service';

/** Quotas per API key and per grant task, held across replicas by gossip; see README.md. */
@Module({
  controllers: [QuotaGossipController],
  providers: [AgentQuotasStore, QuotaLimitsService, QuotaGossipService, QuotasService],
  exports: [QuotasService],
})
export class QuotasModule {}
