/** What a client asked for in `Prefer` (RFC 7240): an answer now or a call to poll, and how long it waits. */
export interface Preferences {
  respondAsync: boolean;
  /** `wait=<seconds>`: the longest the client waits for the answer: the call's timeout. */
  waitMs?: number;
}

/** Reads every `Prefer` header; unknown or malformed preferences are ignored, as RFC 7240 §2 asks. */
export function preferences(header: string | string[] | undefined): Preferences {
  const found: Preferences = { respondAsync: false };
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  for (const preference of values.flatMap((value) => value.split(','))) {
    const [name, value] = preference
      .split(';')[0]
      .split('=')
      .map((part) => part.trim().toLowerCase());
    if (name === 'respond-async') found.respondAsync = true;
    if (name === 'wait' && /^\d{1,6}$/.test(value ?? '')) found.waitMs = Number(value) * 1000;
  }
  return found;
}
