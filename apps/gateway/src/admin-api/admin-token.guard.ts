import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { csrfTokenOf } from '@mcpgw/grants';
import type { FastifyRequest } from 'fastify';
import { AdminApiError } from './admin-api-errors';
import { AdminSessionsStore, type AdminSession } from './admin-sessions.store';
import { AdminTokensStore } from './admin-tokens.store';
import { CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE, readCookies, sameSecret } from './session-cookies';

/** The request of an authenticated operator: the id (never the token) of its admin token, and its session if any. */
export type AdminRequest = FastifyRequest & { adminTokenId?: string; adminSession?: AdminSession };

const REFUSED =
  'missing, wrong, expired or revoked admin token: send Authorization: Bearer <token> (npm run admin -- console token), or log in (POST /admin/v1/session)';
const CSRF_REFUSED = `a session's ${CSRF_HEADER} header must repeat its CSRF cookie on every change`;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The metadata @Public sets (the OpenAPI test checks it is on the login alone). */
export const PUBLIC = 'mcpgw:admin-public';
/** A route that needs no credential (the login itself). */
export const Public = (): MethodDecorator => SetMetadata(PUBLIC, true);

/**
 * Every route of the management API needs a live admin token, either as
 * `Authorization: Bearer adm_…` (scripts), or through a browser session made by
 * logging in with one (its cookie), both checked against their stored digests on
 * each request. Whatever is wrong with the credential (absent, malformed,
 * unknown, revoked, expired), the answer is the same 401. A session's changes
 * (every method but GET, HEAD, OPTIONS) must also carry its CSRF token in
 * `X-CSRF-Token`, equal to its CSRF cookie and derived from the session, else
 * 403 `csrf_failed`: another site can make the browser send the cookies, never
 * read them.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(
    private readonly tokens: AdminTokensStore,
    private readonly sessions: AdminSessionsStore,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const request = context.switchToHttp().getRequest<AdminRequest>();
    const cookies = readCookies(request.headers.cookie);
    const session = cookies.get(SESSION_COOKIE);
    // A bearer header, when sent, is the only credential looked at.
    if (request.headers.authorization !== undefined || session === undefined) {
      const presented = bearerToken(request.headers.authorization);
      const id = presented === undefined ? undefined : await this.tokens.verify(presented);
      if (!id) throw new AdminApiError(401, 'unauthorized', REFUSED);
      request.adminTokenId = id;
      return true;
    }
    const live = await this.sessions.verify(session);
    if (!live) throw new AdminApiError(401, 'unauthorized', REFUSED);
    if (!SAFE_METHODS.has(request.method)) {
      const sent = request.headers[CSRF_HEADER];
      const csrf = typeof sent === 'string' ? sent : undefined;
      if (!sameSecret(csrf, cookies.get(CSRF_COOKIE)) || !sameSecret(csrf, csrfTokenOf(session))) {
        throw new AdminApiError(403, 'csrf_failed', CSRF_REFUSED);
      }
    }
    request.adminTokenId = live.token_id;
    request.adminSession = live;
    return true;
  }
}

/** The token of `Authorization: Bearer <token>` (the scheme in any case), or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  return match?.[1];
}
