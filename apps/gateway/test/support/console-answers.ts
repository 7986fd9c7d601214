import { documentedRoutes, type OpenApiDoc, type ResponseChecker } from './admin-openapi';

export interface CheckedAnswer {
  /** `METHOD /path/{param}` of the document, or the request as made when it is in none. */
  route: string;
  problems: string[];
  /** False when the page dropped the body before it could be read (the route is still checked). */
  read: boolean;
}

/**
 * For a browser test: the documented operation each request of the page went
 * to, and what is wrong with its answer by docs/admin-openapi.yaml. Record
 * every response under /admin/v1 with it, then check them all at the end.
 */
export function answerChecker(doc: OpenApiDoc, checker: ResponseChecker) {
  const templates = documentedRoutes(doc).map((route) => {
    const [method, path] = route.split(' ');
    return { method, path, pattern: new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`) };
  });
  return async (
    method: string,
    pathname: string,
    response: { status(): number; json(): Promise<unknown> },
  ): Promise<CheckedAnswer> => {
    const template = templates.find((t) => t.method === method && t.pattern.test(pathname));
    if (!template) return { route: `${method} ${pathname}`, problems: ['not in docs/admin-openapi.yaml'], read: false };
    const route = `${method} ${template.path}`;
    // A page that navigated away may have dropped the body (reading it can then hang).
    const body = await Promise.race([
      response.json().catch(() => undefined),
      new Promise<undefined>((resolve) => setTimeout(resolve, 5_000)),
    ]);
    if (body === undefined) return { route, problems: [], read: false };
    return { route, problems: checker.check(method, template.path, response.status(), body), read: true };
  };
}
