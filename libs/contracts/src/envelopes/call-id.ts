/**
 * One id per `tools/call`, the same everywhere the call shows: the result on
 * both surfaces (surface A `_meta["mcpgw/callId"]`, surface B
 * `structuredContent.call_id`), the `chat_message` envelope (`call_id`), the
 * webhook event (`data.call_id`), the gateway's log lines and trace
 * (`mcpgw.call_id`), and `npm run admin -- call show <id>`.
 *
 * The gateway's own ids are `call_` and the 32 hex digits of the call's
 * chat_message id, so a call's id follows from its message wherever the
 * message is known (an idempotent retry, an MRTR continuation, a task). A
 * surface B caller may name its own (`params.call_id`), which then is the id.
 */

/** What a caller may name its call: 1-128 printable ASCII characters, no spaces. */
export const CALL_ID_PATTERN = /^[\x21-\x7e]{1,128}$/;

/** Where surface A's result carries the call id (`result._meta`). */
export const CALL_ID_META_KEY = 'mcpgw/callId';

/** The gateway's id for the call posted as chat_message `messageId` (a UUID). */
export function callIdOf(messageId: string): string {
  return `call_${messageId.replaceAll('-', '').toLowerCase()}`;
}

/** The chat_message id a gateway call id is made from; undefined for any other id (a caller's own). */
export function messageIdOfCall(callId: string): string | undefined {
  const hex = /^call_([0-9a-f]{32})$/i.exec(callId)?.[1].toLowerCase();
  return hex && `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
