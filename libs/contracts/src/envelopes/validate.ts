import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { AgentReply } from './agent-reply';
import { ChatMessage } from './chat-message';
import { ContentItemDto, missingContentFields } from './content';

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/** Validate a plain object against a contract class. Never throws. */
export function parseAs<T extends object>(cls: ClassConstructor<T>, plain: unknown): Parsed<T> {
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    return { ok: false, errors: ['expected an object'] };
  }
  const value = plainToInstance(cls, plain);
  const errors = flatten(validateSync(value, { forbidUnknownValues: true }));
  return errors.length ? { ok: false, errors } : { ok: true, value };
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

function flatten(errors: ValidationError[], path = ''): string[] {
  return errors.flatMap((error) => {
    const at = path ? `${path}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => `${at}: ${message}`);
    return [...own, ...flatten(error.children ?? [], at)];
  });
}
