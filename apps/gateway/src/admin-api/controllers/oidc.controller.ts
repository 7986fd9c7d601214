import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AdminApiError } from '../admin-api-errors';
import { AdminOidc, OIDC_FLOW_COOKIE, flowCookie } from '../admin-oidc';
import { ADMIN_SESSION_TTL_SECONDS, AdminSessionsStore } from '../admin-sessions.store';
import { Public, type AdminRequest } from '../admin-token.guard';
import { AdminTokensStore } from '../admin-tokens.store';
import { readCookies } from '../session-cookies';
import { openSession } from './session.controller';

/** The OIDC login, when ADMIN_OIDC_ISSUER is set (null: none). */
export const ADMIN_OIDC = Symbol('ADMIN_OIDC');

/**
 * How the console may log in (`options`), and the OIDC login's two steps: the
 * redirect to the provider and its callback, which opens the same kind of
 * session as an admin token does (the session and CSRF cookies), under an admin
 * token of its own (label `oidc <sub>`, its secret never shown), so that the
 * login is audited, listed and revoked like any other (`console token revoke`).
 */
@Controller('admin/v1/session')
export class OidcController {
  constructor(
    @Inject(ADMIN_OIDC) private readonly oidc: AdminOidc | null,
    private readonly tokens: AdminTokensStore,
    private readonly sessions: AdminSessionsStore,
  ) {}

  @Get('options')
  @Public()
  options(): { token: true; oidc: { issuer: string } | null } {
    return { token: true, oidc: this.oidc ? { issuer: this.oidc.config.issuer } : null };
  }

  @Get('oidc')
  @Public()
  async begin(@Res() reply: FastifyReply): Promise<void> {
    const { location, cookie } = await this.configured().begin();
    await reply.code(302).header('set-cookie', cookie).header('location', location).send();
  }

  @Get('oidc/callback')
  @Public()
  async callback(
    @Query('code') code: string | undefined,
    @Query('state') state: string | undefined,
    @Query('error') error: string | undefined,
    @Req() request: AdminRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const oidc = this.configured();
    // The flow is over whatever happens next: its cookie goes.
    void reply.header('set-cookie', flowCookie('', 0));
    const identity = await oidc.finish(
      { code, state, error },
      readCookies(request.headers.cookie).get(OIDC_FLOW_COOKIE),
    );
    const token = await this.tokens.create(`oidc ${identity.sub}`.slice(0, 200), ADMIN_SESSION_TTL_SECONDS);
    await openSession(this.sessions, token.id, reply);
    request.adminTokenId = token.id;
    await reply.code(302).header('location', '/console/').send();
  }

  private configured(): AdminOidc {
    if (!this.oidc) throw new AdminApiError(404, 'not_found', 'no OIDC login here (ADMIN_OIDC_ISSUER is not set)');
    return this.oidc;
  }
}
