/**
 * How long a question to the client (sampling, elicitation) may wait for its
 * answer when the message carries no deadline (an older gateway): with one, the
 * call's deadline bounds the question and this is not used.
 */
export const INPUT_REQUEST_FALLBACK_MS = 60_000;
