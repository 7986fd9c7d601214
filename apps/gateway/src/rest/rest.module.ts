import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CatalogueModule } from '../catalogue/catalogue.module';
import { GrantsModule } from '../grants/grants.module';
import { McpModule } from '../mcp/mcp.module';
import { QuotasModule } from '../quotas/quotas.module';
import { InvokeController } from './invoke.controller';
import { RestInvoke } from './rest-invoke.service';

/** The REST surface (README.md beside this file): a third dialect over the one call path. */
@Module({
  imports: [AuthModule, GrantsModule, CatalogueModule, QuotasModule, McpModule],
  controllers: [InvokeController],
  providers: [RestInvoke],
})
export class RestModule {}
