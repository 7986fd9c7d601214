import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AdminApiError } from './admin-api-errors';
import { AdminTokensStore } from './admin-tokens.store';

/** The request of an authenticated operator: the id (never the token) of the admin token it came with. */
export type AdminRequest = FastifyRequest & { adminTokenId?: string };

const REFUSED =
  'missing, wrong, expired or revoked admin token: send Authorization: Bearer <token> (npm run admin -- console token)';

/**
 * Every route of the management API needs a live admin token: `Authorization:
 * Bearer adm_…`, checked against its stored digest on each request. Whatever is
 * wrong with it (absent, malformed, unknown, revoked, expired), the answer is the
 * same 401, so a refusal tells an attacker nothing.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(private readonly tokens: AdminTokensStore) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AdminRequest>();
    const presented = bearerToken(request.headers.authorization);
    const id = presented === undefined ? undefined : await this.tokens.verify(presented);
    if (!id) throw new AdminApiError(401, 'unauthorized', REFUSED);
    request.adminTokenId = id;
    return true;
  }
}

/** The token of `Authorization: Bearer <token>` (the scheme in any case), or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  return match?.[1];
}
