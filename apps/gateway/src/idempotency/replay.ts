/** Marks a response this request did not produce itself (Stripe's header name). */
export const REPLAYED_HEADER = 'idempotent-replayed';
const REPLAY_META_KEY = 'mcpgw/idempotentReplay';
const REPLAY_MEMBER = `${JSON.stringify(REPLAY_META_KEY)}:true`;

/**
 * The stored result with `_meta` saying it is a replay; every other byte unchanged.
 * The mark is spliced into the text (results can be large, and a replay should
 * cost no more than a read): `"_meta":{…}` is added as the last member, or the
 * mark as the last member of an existing `_meta` object, exactly where a parse,
 * an assignment and a stringify would put it.
 */
export function markReplay(resultText: string): string {
  const meta = topLevelMember(resultText, '_meta');
  if (meta === undefined) return insertBeforeClose(resultText, lastBrace(resultText), `"_meta":{${REPLAY_MEMBER}}`);
  const value = resultText.slice(meta.start, meta.end);
  if (!value.startsWith('{') || topLevelMember(value, REPLAY_META_KEY) !== undefined) return reserialized(resultText);
  return insertBeforeClose(resultText, meta.end - 1, REPLAY_MEMBER);
}

/** The rare shapes a splice does not cover (a `_meta` that is no object, or already marked). */
function reserialized(resultText: string): string {
  const value = JSON.parse(resultText) as { _meta?: Record<string, unknown> };
  value._meta = { ...value._meta, [REPLAY_META_KEY]: true };
  return JSON.stringify(value);
}

/** `member` as the last member of the object whose `}` is at `close`. */
function insertBeforeClose(text: string, close: number, member: string): string {
  const before = text.slice(0, close).trimEnd();
  return `${before}${before.endsWith('{') ? '' : ','}${member}${text.slice(close)}`;
}

function lastBrace(text: string): number {
  const close = text.lastIndexOf('}');
  if (close < 0 || !text.trimStart().startsWith('{')) throw new Error('a tool result is a JSON object');
  return close;
}

/**
 * Where the value of a member of the outermost object lies in JSON text
 * (`[start, end)`), or undefined when it has no such member. A scan of the
 * text's structure (strings, nesting), never a parse of its values.
 */
export function topLevelMember(json: string, name: string): { start: number; end: number } | undefined {
  let depth = 0;
  let valueStart = -1;
  let found = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === '"') {
      const end = stringEnd(json, i);
      if (depth === 1 && valueStart < 0 && isKey(json, end)) {
        const key = json.slice(i, end);
        found = key === JSON.stringify(name) || (key.includes('\\') && keyName(key) === name);
        i = json.indexOf(':', end);
        valueStart = i + 1;
        while (/\s/.test(json[valueStart] ?? '')) valueStart++;
        continue;
      }
      i = end - 1;
    } else if (c === '{' || c === '[') {
      depth++;
    } else if (c === '}' || c === ']' || c === ',') {
      if (c !== ',') depth--;
      if (depth === (c === ',' ? 1 : 0) && valueStart >= 0) {
        if (found) return { start: valueStart, end: trimmedEnd(json, i) };
        valueStart = -1;
      }
    }
  }
  return undefined;
}

/** The index just past the closing quote of the string that opens at `open`. */
function stringEnd(json: string, open: number): number {
  for (let i = open + 1; i < json.length; i++) {
    if (json[i] === '\\') i++;
    else if (json[i] === '"') return i + 1;
  }
  throw new Error('unterminated string in JSON text');
}

/** A string followed by `:` is a member's name. */
function isKey(json: string, after: number): boolean {
  let i = after;
  while (/\s/.test(json[i] ?? '')) i++;
  return json[i] === ':';
}

/** A name written with escapes: decoded (the name alone, a few bytes). */
function keyName(quoted: string): string {
  return JSON.parse(quoted) as string;
}

function trimmedEnd(json: string, stop: number): number {
  let end = stop;
  while (end > 0 && /\s/.test(json[end - 1])) end--;
  return end;
}
