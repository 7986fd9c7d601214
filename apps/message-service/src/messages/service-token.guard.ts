import { Inject, Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { MESSAGE_SERVICE_ENV, type MessageServiceEnv } from '../config/message-service.env';

/**
 * The REST mirror answers only callers holding MESSAGE_SERVICE_TOKEN, as
 * `Authorization: Bearer <token>`. Without a token configured the mirror is off:
 * every request is refused. The bus API is what the apps use; the mirror is for
 * operators and tests.
 */
@Injectable()
export class ServiceTokenGuard implements CanActivate {
  private readonly expected?: Buffer;

  constructor(@Inject(MESSAGE_SERVICE_ENV) env: MessageServiceEnv) {
    if (env.MESSAGE_SERVICE_TOKEN) this.expected = digest(env.MESSAGE_SERVICE_TOKEN);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expected) throw new UnauthorizedException('the REST mirror is off: set MESSAGE_SERVICE_TOKEN to use it');
    const header = context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>().headers.authorization;
    const token = typeof header === 'string' ? /^Bearer +(\S+)$/i.exec(header)?.[1] : undefined;
    // Digests have one length, so the comparison takes the same time whatever was sent.
    if (!token || !timingSafeEqual(digest(token), this.expected)) {
      throw new UnauthorizedException(
        'a valid service token is required (Authorization: Bearer <MESSAGE_SERVICE_TOKEN>)',
      );
    }
    return true;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
