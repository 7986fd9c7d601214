import { Body, Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { csrfTokenOf } from '@mcpgw/grants';
import type { FastifyReply } from 'fastify';
import { AdminApiError } from '../admin-api-errors';
import { AdminLoginCodesStore } from '../admin-login-codes.store';
import { AdminSessionsStore } from '../admin-sessions.store';
import { Public, type AdminRequest } from '../admin-token.guard';
import { AdminTokensStore } from '../admin-tokens.store';
import { objectBody } from '../request-body';
import { clearedCookies, sessionCookies } from '../session-cookies';

export interface SessionView {
  token_id: string;
  /** How this request was authenticated. */
  via: 'token' | 'session';
  /** The session's end (null when authenticated by the bearer header). */
  expires_at: string | null;
}

/**
 * Browser login for the console: an admin token in, a session cookie
 * (HttpOnly) and a CSRF cookie out. Scripts keep using the bearer header.
 */
@Controller('admin/v1/session')
export class SessionController {
  constructor(
    private readonly tokens: AdminTokensStore,
    private readonly sessions: AdminSessionsStore,
    private readonly loginCodes: AdminLoginCodesStore,
  ) {}

  @Post()
  @Public()
  @HttpCode(201)
  async login(
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SessionView & { csrf_token: string }> {
    const { token, login_code: code } = objectBody(body, ['token', 'login_code']);
    if (token !== undefined && code !== undefined) {
      throw new AdminApiError(400, 'invalid_request', 'send token (an admin token) or login_code, not both');
    }
    // A login code (the login link) is used up here: a second exchange is refused like a wrong code.
    const tokenId =
      typeof token === 'string'
        ? await this.tokens.verify(token)
        : typeof code === 'string'
          ? await this.loginCodes.redeem(code)
          : undefined;
    if (!tokenId) throw new AdminApiError(401, 'unauthorized', 'missing, wrong, expired, used or revoked credential');
    return openSession(this.sessions, tokenId, reply);
  }

  /** Who is asking: the console's "am I logged in". */
  @Get()
  show(@Req() request: AdminRequest): SessionView {
    const session = request.adminSession;
    return {
      token_id: request.adminTokenId!,
      via: session ? 'session' : 'token',
      expires_at: session?.expires_at ?? null,
    };
  }

  /** Log out: the session is refused from now on, and its cookies are cleared. */
  @Delete()
  @HttpCode(200)
  async logout(
    @Req() request: AdminRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<{ ended: boolean }> {
    if (!request.adminSession) return { ended: false };
    await this.sessions.end(request.adminSession.id);
    void reply.header('set-cookie', clearedCookies());
    return { ended: true };
  }
}

/** A session for the admin token `tokenId`, its cookies set on `reply` (the OIDC callback opens one too). */
export async function openSession(
  sessions: AdminSessionsStore,
  tokenId: string,
  reply: FastifyReply,
): Promise<SessionView & { csrf_token: string }> {
  const created = await sessions.create(tokenId);
  const csrf = csrfTokenOf(created.session);
  void reply.header('set-cookie', sessionCookies(created.session, csrf, secondsUntil(created.expires_at)));
  return { token_id: tokenId, via: 'session', expires_at: created.expires_at, csrf_token: csrf };
}

function secondsUntil(iso: string): number {
  return (Date.parse(iso) - Date.now()) / 1000;
}
