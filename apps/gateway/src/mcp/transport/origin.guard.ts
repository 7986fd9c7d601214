import { ForbiddenException, Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';

/**
 * DNS-rebinding protection for the MCP endpoints: a request that carries an
 * `Origin` must come from an allowed origin (MCP_ALLOWED_ORIGINS; `*` allows
 * any, and `:*` any port), and its `Host` must be allowed when MCP_ALLOWED_HOSTS
 * is set. Clients that are not browsers send no Origin and are not affected.
 */
@Injectable()
export class OriginGuard implements CanActivate {
  private readonly origins: RegExp[];
  private readonly hosts: Set<string> | undefined;

  constructor(@Inject(GATEWAY_ENV) env: GatewayEnv) {
    this.origins = list(env.MCP_ALLOWED_ORIGINS).map(pattern);
    const hosts = list(env.MCP_ALLOWED_HOSTS);
    this.hosts = hosts.length ? new Set(hosts.map((h) => h.toLowerCase())) : undefined;
  }

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<FastifyRequest>();
    const origin = req.headers.origin;
    if (origin !== undefined && !this.origins.some((allowed) => allowed.test(origin))) {
      throw new ForbiddenException(`Origin ${origin} is not allowed`);
    }
    const host = (req.headers.host ?? '').toLowerCase();
    if (this.hosts && !this.hosts.has(host) && !this.hosts.has(host.replace(/:\d+$/, ''))) {
      throw new ForbiddenException(`Host ${host} is not allowed`);
    }
    return true;
  }
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function pattern(allowed: string): RegExp {
  if (allowed === '*') return /^/;
  const escaped = allowed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\\\*$/, '(:\\d+)?');
  return new RegExp(`^${escaped}$`, 'i');
}
