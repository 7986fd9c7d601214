import type { Schemas } from './api';

/**
 * The management API's calls and channels as the console reads them: the
 * document's own schemas (docs/admin-openapi.yaml: CallPage, CallFound,
 * ChannelPage, Conversation), by the names the pages use.
 */
export type CallOutcome = Schemas['CallOutcome'];
export const CALL_OUTCOMES = ['ok', 'tool_error', 'failed', 'no_reply'] as const satisfies readonly CallOutcome[];

export type Timings = Schemas['Timings'];
export type StoredEnvelope = Schemas['StoredEnvelope'];
export type CallSummary = Schemas['CallSummary'];
export type CallPage = Schemas['CallPage'];
export type CallDetail = Schemas['CallDetail'];
export type CallFound = Schemas['CallFound'];
export type Channel = Schemas['Channel'];
export type ChannelPage = Schemas['ChannelPage'];
export type Turn = Schemas['Turn'];
export type Conversation = Schemas['Conversation'];

/** `?a=1&b=2` of the fields that have a value, or '': a console route's query (`#/calls?…`). */
export function queryOf(fields: Record<string, string | undefined>): string {
  const given = Object.entries(fields).filter((entry): entry is [string, string] => !!entry[1]);
  return given.length ? `?${new URLSearchParams(given).toString()}` : '';
}
