import { expect } from 'vitest';
import type { ResponseChecker } from './admin-openapi';

export interface AdminAnswer<T = AdminJson> {
  status: number;
  body: T;
  headers: Headers;
}
export type AdminJson = Record<string, any>;

/**
 * A client of the management API for e2e tests: `GET /admin/v1/calls/{callId}`
 * with `params` filled in (encoded), the bearer token, and every answer checked
 * against docs/admin-openapi.yaml for that route and status (and `no-store`).
 */
export function adminClient(origin: string, checker: ResponseChecker, token: () => string) {
  return async <T = AdminJson>(
    method: string,
    route: string,
    options: { params?: Record<string, string>; query?: string; auth?: string | null } = {},
  ): Promise<AdminAnswer<T>> => {
    const path =
      route.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(options.params![name])) +
      (options.query ? `?${options.query}` : '');
    const auth = options.auth === undefined ? `Bearer ${token()}` : options.auth;
    const response = await fetch(`${origin}${path}`, {
      method,
      headers: auth === null ? {} : { authorization: auth },
    });
    const body = (await response.json()) as T;
    expect(checker.check(method, route, response.status, body), `${method} ${path}`).toEqual([]);
    expect(response.headers.get('cache-control')).toBe('no-store');
    return { status: response.status, body, headers: response.headers };
  };
}
