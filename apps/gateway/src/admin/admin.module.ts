import { Module } from '@nestjs/common';
import { AgentsStore } from '../agents/agents.store';
import { ApiKeysStore } from '../auth/api-keys.store';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';

/** What the admin CLI needs: the stores, over the gateway's database. No HTTP, no bus. */
@Module({
  imports: [ConfigModule, DatabaseModule],
  providers: [AgentsStore, ApiKeysStore],
})
export class AdminModule {}
