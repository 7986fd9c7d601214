import { Module } from '@nestjs/common';
import { AgentsModule } from '../../agents/agents.module';
import { CatalogueModule } from '../../catalogue/catalogue.module';
import { McpModule } from '../../mcp/mcp.module';
import { ActivityFeed } from './activity-feed.service';
import { PlaygroundService } from './playground.service';

/** What the management API's live routes need, in the gateway's own application: they are handed over as values. */
export interface AdminLive {
  playground: PlaygroundService;
  activity: ActivityFeed;
}

/** The token under which AdminHttpModule holds them (absent in a bare admin app: those routes answer 503). */
export const ADMIN_LIVE = Symbol('ADMIN_LIVE');

/**
 * The playground and the activity feed, built in the gateway's application
 * (beside the MCP surfaces, on their CallRunner and the bus), for the
 * management API's controllers (live.controller.ts) in its own application.
 */
@Module({
  imports: [AgentsModule, CatalogueModule, McpModule],
  providers: [PlaygroundService, ActivityFeed],
  exports: [PlaygroundService, ActivityFeed],
})
export class AdminLiveModule {}
