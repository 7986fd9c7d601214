import type { Parsed } from '../envelopes/validate';

/**
 * Checks a decoded payload against the contract; built on compiled ajv
 * validators. Never throws. Run once, where a payload arrives from the bus.
 */
export type PayloadCheck<T> = (plain: unknown) => Parsed<T>;

/**
 * One subject and what travels on it: `T` is the payload, `R` the answer when
 * the subject also takes requests (`never` when it does not).
 */
export interface Address<T, R = never> {
  /** The subject family (per-entity tokens as `*`), for logs and drop counters. */
  readonly family: string;
  subject(prefix: string): string;
  readonly check: PayloadCheck<T>;
  /** Never set: it only carries the type of the answer to a request. */
  readonly answer?: R;
}

/** A family of subjects, one per entity (message, agent, replica), with one payload type. */
export interface SubjectSpec<P extends readonly string[], T, R = never> {
  readonly family: string;
  subject(prefix: string, ...params: P): string;
  /** The subject of one entity, to publish or subscribe to. */
  at(...params: P): Address<T, R>;
  /** A member of the family whose full subject travelled in a header (e.g. `Mcpgw-Reply-To`). */
  exact(subject: string): Address<T, R>;
  readonly check: PayloadCheck<T>;
}

/** Declare a subject family once: how its subjects are named and what they carry. */
export function defineSubject<P extends readonly string[], T, R = never>(spec: {
  family: string;
  subject: (prefix: string, ...params: P) => string;
  check: PayloadCheck<T>;
}): SubjectSpec<P, T, R> {
  const { family, subject, check } = spec;
  return {
    family,
    subject,
    check,
    at: (...params) => ({ family, check, subject: (prefix) => subject(prefix, ...params) }),
    exact: (full) => ({ family, check, subject: () => full }),
  };
}

/** A fan-out event: every replica of the listening app gets a copy. Heard by `@EventPattern(spec.pattern)`. */
export interface EventSpec<T> extends Address<T> {
  /** The subject relative to the prefix, as Nest handlers name it. */
  readonly pattern: string;
}

export function defineEvent<T>(pattern: string, check: PayloadCheck<T>): EventSpec<T> {
  return { family: pattern, pattern, check, subject: (prefix) => `${prefix}.${pattern}` };
}
