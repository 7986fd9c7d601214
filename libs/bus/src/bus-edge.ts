import type { Address, Parsed } from '@mcpgw/contracts';
import { busMeter } from './bus-meter';
import { decodeJson } from './json';
import { busLog } from './bus-log';

/** At most one warning per family in this window: a rogue sender must not flood the log. */
const WARN_EVERY_MS = 10_000;
const lastWarned = new Map<string, { at: number; suppressed: number }>();

/**
 * The edge: a payload as it arrives from the bus, decoded and checked against
 * its subject's contract, once. What fails is counted
 * (`mcpgw_bus_dropped_total`) and logged ("dropping malformed <what>"), and
 * never reaches a handler.
 */
export function admit<T>(
  address: Pick<Address<T, unknown>, 'family' | 'check'>,
  data: Uint8Array,
  what = `malformed payload on ${address.family}`,
): Parsed<T> {
  const plain = decodeJson(data);
  const parsed: Parsed<T> = plain === undefined ? { ok: false, errors: ['payload is not JSON'] } : address.check(plain);
  if (!parsed.ok) refused(address.family, what, parsed.errors);
  return parsed;
}

/** Drop something that passed its check but must not be acted on (e.g. a reply from the wrong agent): counted and logged like a malformed payload. */
export function refuseOnBus(family: string, what: string, reason: string): void {
  refused(family, what, [reason]);
}

function refused(family: string, what: string, errors: string[]): void {
  busMeter.drop(family);
  const now = Date.now();
  const last = lastWarned.get(family);
  if (last && now - last.at < WARN_EVERY_MS) {
    last.suppressed++;
    return;
  }
  lastWarned.set(family, { at: now, suppressed: 0 });
  busLog.warn({
    msg: `dropping ${what}`,
    family,
    errors: errors.slice(0, 5),
    suppressed: last?.suppressed ?? 0,
  });
}
