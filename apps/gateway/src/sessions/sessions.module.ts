import { Module } from '@nestjs/common';
import { SessionsService } from './sessions.service';
import { SessionsStore } from './sessions.store';

@Module({ providers: [SessionsStore, SessionsService], exports: [SessionsService] })
export class SessionsModule {}
