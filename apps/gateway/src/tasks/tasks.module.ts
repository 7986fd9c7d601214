import { Module } from '@nestjs/common';
import { CallsModule } from '../calls/calls.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { LegacyTasks } from './legacy-tasks.service';
import { TaskService } from './tasks.service';
import { TaskStore } from './tasks.store';

/** Tasks (io.modelcontextprotocol/tasks): rows in PostgreSQL, calls on the bus (README.md). */
@Module({
  imports: [CallsModule, WebhooksModule],
  providers: [TaskStore, TaskService, LegacyTasks],
  exports: [TaskService, LegacyTasks, TaskStore],
})
export class TasksModule {}
