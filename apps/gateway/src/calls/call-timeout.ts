/*
 * The call timeout rules live in `timeouts/call-time.ts`; this file only keeps
 * the old import path working for code that has not moved to it yet.
 */
export { TIMEOUT_META_KEY, callTimeout } from '../timeouts/call-time';
