import { Module } from '@nestjs/common';
import { OAuthAuthenticator } from './oauth-authenticator.service';
import { ProtectedResourceController } from './protected-resource.controller';

@Module({
  controllers: [ProtectedResourceController],
  providers: [OAuthAuthenticator],
  exports: [OAuthAuthenticator],
})
export class OAuthModule {}
