import type { RegExpEngine, RegExpLike } from 'ajv/dist/types';
import { RE2JS } from 're2js';

/**
 * The largest RE2 program (roughly: instructions, see `RE2JS.programSize`) an
 * agent's pattern may compile to. Matching costs about input length × program
 * size; `^[a-zA-Z0-9._-]{1,255}$` is 513, a UUID pattern 40.
 */
export const MAX_PATTERN_PROGRAM_SIZE = 1000;

/** A pattern from an agent that the gateway will not run; refused at registration. */
export class UnsupportedPatternError extends Error {
  constructor(
    readonly pattern: string,
    reason: string,
  ) {
    super(`pattern ${JSON.stringify(pattern)} is refused: ${reason}`);
  }
}

/** A string longer than the cap was to be tested against an agent's pattern (thrown mid-validation). */
export class PatternInputTooLongError extends Error {
  constructor(
    readonly length: number,
    readonly max: number,
  ) {
    super(`a string of ${length} characters is longer than the ${max} allowed for a value checked against a pattern`);
  }
}

/**
 * ajv's `code.regExp` backed by re2js: linear time in the input, whatever the
 * pattern. A pattern must be valid ECMA-262 (what JSON Schema says a pattern
 * is, checked by compiling, never running, a JS RegExp) and compile on RE2:
 * backreferences and lookaround cannot, and are refused with the reason.
 * `test` refuses strings longer than `maxInputChars` by throwing
 * `PatternInputTooLongError`, which the validator turns into an argument error.
 */
export function re2Engine(maxInputChars: number): RegExpEngine {
  const engine = (pattern: string, flags: string): RegExpLike => {
    try {
      new RegExp(pattern, flags);
    } catch (error) {
      throw new UnsupportedPatternError(pattern, `not an ECMA-262 regular expression (${(error as Error).message})`);
    }
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    } catch (error) {
      throw new UnsupportedPatternError(
        pattern,
        `the linear-time engine (RE2) cannot run it; backreferences and lookaround are not supported (${(error as Error).message})`,
      );
    }
    if (compiled.programSize() > MAX_PATTERN_PROGRAM_SIZE) {
      throw new UnsupportedPatternError(
        pattern,
        `it compiles to ${compiled.programSize()} RE2 instructions, more than the ${MAX_PATTERN_PROGRAM_SIZE} allowed`,
      );
    }
    const matcher: RegExpLike & { toString(): string } = {
      test(input: string): boolean {
        if (input.length > maxInputChars) throw new PatternInputTooLongError(input.length, maxInputChars);
        return compiled.test(input);
      },
      // ajv keys its compiled patterns by toString(): it must differ per pattern, like a RegExp's.
      toString: () => `/${pattern}/${flags}`,
    };
    return matcher;
  };
  // Only used by ajv's standalone code generation, which the gateway does not use.
  return Object.assign(engine, { code: 're2Engine' });
}
