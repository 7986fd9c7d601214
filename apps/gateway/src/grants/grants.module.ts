import { Module } from '@nestjs/common';
import { GrantKeysService } from './grant-keys.service';
import { GrantRevocationsStore } from './grant-revocations.store';
import { RuntimeGrantAuthenticator } from './runtime-grant-authenticator.service';

/** RuntimeGrants on the gateway: keys, revocations, authentication of the grant surface. */
@Module({
  providers: [GrantKeysService, GrantRevocationsStore, RuntimeGrantAuthenticator],
  exports: [RuntimeGrantAuthenticator],
})
export class GrantsModule {}
