import { Module } from '@nestjs/common';
import { AdminApiServer } from './admin-api.server';
import { AdminLiveModule } from './live/admin-live.module';

/**
 * The management API (README.md beside this file), in the gateway's app: it
 * only starts and stops the API's own server (AdminApiServer) on ADMIN_PORT.
 * The routes live in AdminHttpModule, the root of that server's application,
 * so nothing of them is ever registered on the public port.
 */
@Module({ imports: [AdminLiveModule], providers: [AdminApiServer] })
export class AdminApiModule {}
