import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module';
import { OAuthModule } from '../oauth/oauth.module';
import { AgentAuthenticator } from './agent-authenticator.service';
import { ApiKeyAuthenticator } from './api-key-authenticator.service';
import { ApiKeysStore } from './api-keys.store';

@Module({
  imports: [OAuthModule, AgentsModule],
  providers: [ApiKeysStore, ApiKeyAuthenticator, AgentAuthenticator],
  exports: [ApiKeysStore, ApiKeyAuthenticator, AgentAuthenticator, OAuthModule],
})
export class AuthModule {}
