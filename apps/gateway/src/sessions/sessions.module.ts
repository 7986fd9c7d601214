import { Module } from '@nestjs/common';
import { ConversationHandles } from './conversation-handles';
import { SessionsService } from './sessions.service';
import { SessionsStore } from './sessions.store';

@Module({
  providers: [SessionsStore, SessionsService, ConversationHandles],
  exports: [SessionsService, ConversationHandles],
})
export class SessionsModule {}
