import { Module } from '@nestjs/common';
import { OAuthModule } from '../oauth/oauth.module';
import { AgentAuthenticator } from './agent-authenticator.service';
import { ApiKeyAuthenticator } from './api-key-authenticator.service';
import { ApiKeysStore } from './api-keys.store';

@Module({
  imports: [OAuthModule],
  providers: [ApiKeysStore, ApiKeyAuthenticator, AgentAuthenticator],
  exports: [ApiKeysStore, ApiKeyAuthenticator, AgentAuthenticator],
})
export class AuthModule {}
