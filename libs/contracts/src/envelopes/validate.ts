import type { ClassConstructor } from 'class-transformer';
import { AgentReply } from './agent-reply';
import { ChatMessage } from './chat-message';
import { ContentItemDto, missingContentFields } from './content';
import { validateByDecorators } from './decorated';
import { compiledValidator, describeErrors } from './schemas';

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/**
 * Validate a plain object against a contract class. Never throws. The bus
 * messages (ChatMessage, AgentReply, the call events, CancelRequest) are checked
 * by compiled JSON Schemas and `value` is `plain` itself, not a class instance;
 * other classes by their class-validator decorators.
 */
export function parseAs<T extends object>(cls: ClassConstructor<T>, plain: unknown): Parsed<T> {
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    return { ok: false, errors: ['expected an object'] };
  }
  const validate = compiledValidator(cls);
  if (!validate) return validateByDecorators(cls, plain);
  return validate(plain) ? { ok: true, value: plain as T } : { ok: false, errors: describeErrors(validate.errors) };
}

/** A chat_message or an agent_reply, told apart by `type`. */
export function parseEnvelope(plain: unknown): Parsed<ChatMessage | AgentReply> {
  const type = (plain as { type?: unknown } | null)?.type;
  if (type === 'chat_message') return parseAs(ChatMessage, plain);
  if (type === 'agent_reply') {
    const parsed = parseAs(AgentReply, plain);
    if (!parsed.ok) return parsed;
    const missing = parsed.value.content.flatMap((item: ContentItemDto, i: number) =>
      missingContentFields(item).map((field) => `content.${i}.${String(field)} is required for ${item.type}`),
    );
    return missing.length ? { ok: false, errors: missing } : parsed;
  }
  return { ok: false, errors: ['type must be chat_message or agent_reply'] };
}
