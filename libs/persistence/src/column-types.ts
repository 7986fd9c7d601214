import type { ColumnType } from 'kysely';

/**
 * Column types for the apps' Kysely schemas: what pg reads a PostgreSQL type
 * as, and what a statement may write to it.
 */

/**
 * A column with a default (or a serial): optional on insert. Unlike Kysely's
 * own `Generated`, it keeps the select/insert/update types of a `ColumnType`
 * it wraps (as kysely-codegen's does), so `Generated<Timestamp>` reads as a Date.
 */
export type Generated<T> =
  T extends ColumnType<infer S, infer I, infer U> ? ColumnType<S, I | undefined, U> : ColumnType<T, T | undefined, T>;

/** timestamptz: read as a Date; written as a Date or ISO text (or an SQL expression such as now()). */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;

/** bigint/bigserial: read as text, since it may not fit a JS number. */
export type Int8 = ColumnType<string, string | number | bigint, string | number | bigint>;

/**
 * jsonb: read parsed; written as JSON text, because pg would make a JS array
 * a PostgreSQL array, not JSON.
 */
export type Json<T> = ColumnType<T, string, string>;
