/**
 * RFC 6570 URI templates from agents, parsed once and matched by a linear scan
 * (no regular expression is built from a template). Levels 1-3 operators; the
 * level 4 modifiers (`:n`, `*`) are accepted and widen what a value may hold.
 * The matching rule, in full, is in README.md ("Resource templates").
 */

type Operator = '' | '+' | '#' | '.' | '/' | ';' | '?' | '&';

interface Expression {
  /** `#./;?&`: the character an expansion starts with; '' for `{x}` and `{+x}`. */
  prefix: string;
  /** `{x}` and `{+x}` need at least one character; prefixed ones may expand to nothing. */
  required: boolean;
  /** Characters a value may not contain. */
  excluded: string;
}

type Part = { literal: string } | { expression: Expression };

const OPERATORS = '+#./;?&';
const RESERVED_OPERATORS = '=,!@|';

/** Can't parse: the reason, for the registration error. */
export class UriTemplateError extends Error {
  constructor(template: string, reason: string) {
    super(`uriTemplate ${JSON.stringify(template.slice(0, 200))}: ${reason}`);
  }
}

export class UriTemplate {
  private constructor(
    readonly template: string,
    private readonly parts: readonly Part[],
  ) {}

  /** Parses `template`; throws UriTemplateError for what RFC 6570 does not allow. */
  static parse(template: string): UriTemplate {
    const parts: Part[] = [];
    let literal = '';
    for (let i = 0; i < template.length;) {
      const open = template.indexOf('{', i);
      if (open < 0) {
        literal += template.slice(i);
        break;
      }
      literal += template.slice(i, open);
      const close = template.indexOf('}', open + 1);
      if (close < 0) throw new UriTemplateError(template, `the "{" at ${open} is never closed`);
      const body = template.slice(open + 1, close);
      if (body.includes('{')) throw new UriTemplateError(template, `the "{" at ${open} opens a nested "{"`);
      if (literal) parts.push({ literal });
      literal = '';
      parts.push({ expression: expression(template, body) });
      i = close + 1;
    }
    if (literal) parts.push({ literal });
    return new UriTemplate(template, parts);
  }

  /** Does `uri` belong to this template? Time linear in the URI (times the template's size). */
  matches(uri: string): boolean {
    let pos = 0;
    for (let k = 0; k < this.parts.length;) {
      const part = this.parts[k];
      if ('literal' in part) {
        if (!uri.startsWith(part.literal, pos)) return false;
        pos += part.literal.length;
        k++;
        continue;
      }
      // A run of adjacent expressions, up to the next literal (or the end).
      let next = k;
      const run: Expression[] = [];
      for (let p = this.parts[next]; next < this.parts.length && 'expression' in p; p = this.parts[++next]) {
        run.push(p.expression);
      }
      const minimum = run.filter((e) => e.required).length;
      let end: number;
      if (next === this.parts.length) end = uri.length;
      else {
        const { literal } = this.parts[next] as { literal: string };
        // The last literal must end the URI; any other: its first occurrence ends the run.
        end = next === this.parts.length - 1 ? uri.length - literal.length : uri.indexOf(literal, pos + minimum);
        if (end < pos + minimum || (next === this.parts.length - 1 && !uri.endsWith(literal))) return false;
      }
      if (!matchRun(run, uri, pos, end)) return false;
      pos = end;
      k = next;
    }
    return pos === uri.length;
  }
}

function expression(template: string, body: string): Expression {
  const first = body.charAt(0);
  if (RESERVED_OPERATORS.includes(first)) {
    throw new UriTemplateError(template, `operator "${first}" is reserved by RFC 6570`);
  }
  const operator = (OPERATORS.includes(first) ? first : '') as Operator;
  const names = body.slice(operator.length).split(',');
  let exploded = names.length > 1;
  for (const spec of names) {
    const name = spec.replace(/(\*|:[0-9]{1,4})$/, '');
    if (name !== spec) exploded ||= spec.endsWith('*');
    if (!isVarname(name)) throw new UriTemplateError(template, `{${body}} has an invalid variable name "${name}"`);
  }
  switch (operator) {
    case '':
      return { prefix: '', required: true, excluded: '/' };
    case '+':
      return { prefix: '', required: true, excluded: '' };
    case '#':
      return { prefix: '#', required: false, excluded: '' };
    case '/':
      // `{/a,b}` and `{/a*}` expand to several segments; `{/a}` to one.
      return { prefix: '/', required: false, excluded: exploded ? '?#' : '/?#' };
    case '.':
    case ';':
      return { prefix: operator, required: false, excluded: '/?#' };
    case '?':
    case '&':
      return { prefix: operator, required: false, excluded: '#' };
  }
}

/** RFC 6570 varname: (ALPHA / DIGIT / "_" / pct-encoded) with single dots between. */
function isVarname(name: string): boolean {
  if (!name || name.startsWith('.') || name.endsWith('.') || name.includes('..')) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    const word = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 46;
    if (word) continue;
    if (c !== 37 || !isHex(name.charCodeAt(i + 1)) || !isHex(name.charCodeAt(i + 2))) return false;
    i += 2;
  }
  return true;
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/**
 * Splits uri[start, end) among adjacent expressions, left to right, never
 * going back: an expression followed by a prefixed one ends where a later
 * prefix first appears; followed by `{x}` or `{+x}`, it takes the least it can
 * (one character, or its prefix alone); the last takes the rest.
 */
function matchRun(run: Expression[], uri: string, start: number, end: number): boolean {
  let pos = start;
  for (let r = 0; r < run.length; r++) {
    const e = run[r];
    let from = pos;
    if (e.prefix) {
      if (pos >= end || uri[pos] !== e.prefix) continue; // expands to nothing
      from = pos + 1;
    }
    let to: number;
    if (r === run.length - 1) to = end;
    else if (!run[r + 1].prefix) to = e.required ? from + 1 : from;
    else {
      const stops = run
        .slice(r + 1)
        .map((later) => later.prefix)
        .join('');
      to = from + (e.required ? 1 : 0);
      while (to < end && !stops.includes(uri[to])) to++;
    }
    if (to > end || (e.required && to === from)) return false;
    for (let i = from; i < to; i++) if (e.excluded.includes(uri[i])) return false;
    pos = to;
  }
  return pos === end;
}
