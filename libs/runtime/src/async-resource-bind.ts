import { AsyncResource } from 'node:async_hooks';

type Bind = <F extends (...args: never[]) => unknown>(this: AsyncResource, fn: F, thisArg?: unknown) => F;

let installed = false;

/**
 * Make `AsyncResource#bind` cost what it should on Node 20.
 *
 * Fastify binds one callback per request with a body (`new AsyncResource(…)
 * .bind(onDone)` in its content-type parser). Node 20's `bind` also defines a
 * deprecated `asyncResource` accessor pair on every bound function (DEP0172),
 * wrapped in `util.deprecate`: about 10 µs per call, measured at 4 % of the
 * gateway's CPU under load (docs/benchmarks.md). This `bind` does the same
 * thing, runs `fn` in the resource's async scope with the caller's `this` (or
 * `thisArg`), and keeps `length`, without the deprecated property, in about
 * 0.4 µs. Nothing in this code base reads `asyncResource` off a bound function.
 */
export function installCheapAsyncResourceBind(): void {
  if (installed) return;
  installed = true;
  const bind: Bind = function (this: AsyncResource, fn, thisArg) {
    if (typeof fn !== 'function') throw new TypeError('The "fn" argument must be of type function');
    return boundTo(this, fn, thisArg);
  };
  AsyncResource.prototype.bind = bind as typeof AsyncResource.prototype.bind;
}

function boundTo<F extends (...args: never[]) => unknown>(resource: AsyncResource, fn: F, thisArg: unknown): F {
  const run = fn as unknown as (...args: unknown[]) => unknown;
  const bound =
    thisArg === undefined
      ? function (this: unknown, ...args: unknown[]) {
          return resource.runInAsyncScope(run, this, ...args);
        }
      : (...args: unknown[]) => resource.runInAsyncScope(run, thisArg, ...args);
  Object.defineProperty(bound, 'length', { configurable: true, enumerable: false, value: fn.length, writable: false });
  return bound as unknown as F;
}
