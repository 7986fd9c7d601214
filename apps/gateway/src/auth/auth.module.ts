import { Module } from '@nestjs/common';
import { ApiKeyAuthenticator } from './api-key-authenticator.service';
import { ApiKeysStore } from './api-keys.store';

@Module({ providers: [ApiKeysStore, ApiKeyAuthenticator], exports: [ApiKeysStore, ApiKeyAuthenticator] })
export class AuthModule {}
