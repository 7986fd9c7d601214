import { EnvModule } from '@mcpgw/config';
import { Module } from '@nestjs/common';
import { AgentsStore } from '../agents/agents.store';
import { ApiKeysStore } from '../auth/api-keys.store';
import { GATEWAY_ENV, loadEnv } from '../config/gateway.env';
import { DatabaseModule } from '../database/database.module';

/** What the admin CLI needs: the stores, over the gateway's database. No HTTP, no bus. */
@Module({
  imports: [EnvModule.forRoot(GATEWAY_ENV, loadEnv), DatabaseModule],
  providers: [AgentsStore, ApiKeysStore],
})
export class AdminModule {}
