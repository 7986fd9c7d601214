import { UNSTORABLE_TEXT_REFUSAL, holdsUnstorableText, type ClientRequestMethod } from '@mcpgw/contracts';
import { capabilityFor, declares, MISSING_CAPABILITY } from '../mcp/input-required/input-round';

/** JSON-RPC invalid params. */
const INVALID_PARAMS = -32602;

/**
 * Why a task cannot take an agent's question, when it cannot; the agent is
 * answered with it, as it would be by a client's refusal. The client did not
 * declare the capability the question needs (-32021, as in MRTR), or the
 * params hold text the task's row cannot keep (U+0000, a lone surrogate:
 * PostgreSQL refuses it, and the question would be lost with the task left
 * waiting): -32602.
 */
export function questionRefusal(
  method: ClientRequestMethod,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> | undefined,
): { code: number; message: string } | undefined {
  const capability = capabilityFor(method, params);
  if (capabilities && !declares(capabilities, capability)) {
    return { code: MISSING_CAPABILITY, message: `the client did not declare the ${capability} capability` };
  }
  if (holdsUnstorableText(params))
    return { code: INVALID_PARAMS, message: `the question's params: ${UNSTORABLE_TEXT_REFUSAL}` };
  return undefined;
}
