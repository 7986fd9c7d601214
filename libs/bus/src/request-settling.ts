import { RequestOne } from 'nats/lib/nats-base-client/request';

type Resolver = RequestOne['resolver'];
const QUIET = Symbol.for('mcpgw.bus.quietRequestSettling');

/**
 * An answered request costs no error object.
 *
 * nats.js settles a request (`RequestOne.resolver`) and then cancels it, and
 * its `cancel` rejects the already settled promise with a new `NatsError`
 * ("cancelled"), stack trace and all, that nobody can observe. Under load that
 * was 2.4 % of the gateway's CPU and 5.9 % of the agent pod's
 * (docs/benchmarks.md, "Issue 44 (errors nobody sees)"). This resolver does
 * what the original does without that rejection: the timer cleared, the
 * promise settled (with the answer, or with the error it was given), the
 * request taken off the connection's reply multiplexer. `cancel` itself is
 * untouched. Process-wide and once; tied to nats 2.29 (pinned), like
 * `coalesceWrites`.
 */
export function settleRequestsQuietly(): void {
  const proto = RequestOne.prototype as RequestOne & { [QUIET]?: true };
  if (proto[QUIET]) return;
  if (typeof proto.resolver !== 'function' || typeof proto.cancel !== 'function') {
    throw new Error('nats client internals changed: cannot settle requests quietly');
  }
  const resolver: Resolver = function (this: RequestOne, err, msg) {
    this.timer?.cancel();
    if (err) {
      if (this.ctx) err.stack += `\n\n${this.ctx.stack}`;
      this.deferred.reject(err);
    } else {
      this.deferred.resolve(msg);
    }
    this.mux.cancel(this);
  };
  proto.resolver = resolver;
  proto[QUIET] = true;
}
