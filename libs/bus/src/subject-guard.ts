/**
 * Subjects that come from outside (a request's reply subject, a header, a
 * payload) are validated here before anything is published to them. NATS
 * itself checks none of them on the way out: nats.js writes `PUB <subject>
 * <size>` as it is given, so a subject with a space adds protocol arguments,
 * and a subject that is well formed but points elsewhere (`$JS.API.…`,
 * `$SYS.REQ.…`, another agent's consumer) makes the service act there with its
 * own permissions.
 */

/** Longer than any subject this bus makes; NATS has no limit of its own. */
export const MAX_SUBJECT_LENGTH = 512;

/**
 * One literal token: printable ASCII without space, `.`, `*` or `>`. Stricter
 * than NATS (which takes any byte but whitespace and the separators): nothing
 * this bus names needs more, and nothing else is ours to publish to.
 */
const TOKEN = /^[!-)+-\-/-=?-~]+$/;

/**
 * True when `subject` is a concrete NATS subject (every token a literal, no
 * wildcard, no whitespace, no empty token) of the shape `pattern` names:
 * `pattern` is a subject whose `*` tokens stand for exactly one token each,
 * and whose last token may be `>` for one or more. Literal tokens of the
 * pattern must match exactly, and so must the number of tokens.
 *
 *     subjectOfShape('$JS.ACK.S.agent_a.1.2.3.4.5', '$JS.ACK.S.agent_a.*.*.*.*.*') // true
 *     subjectOfShape('$JS.ACK.S.agent_a.1 x y.2.3.4.5', …)                        // false: a space
 *     subjectOfShape('_INBOX.p.agent.a.Xy.1', '_INBOX.p.agent.a.>')               // true
 */
export function subjectOfShape(subject: unknown, pattern: string): subject is string {
  if (typeof subject !== 'string' || subject.length === 0 || subject.length > MAX_SUBJECT_LENGTH) return false;
  const got = subject.split('.');
  if (!got.every((token) => TOKEN.test(token))) return false;
  const want = pattern.split('.');
  const rest = want[want.length - 1] === '>';
  const fixed = rest ? want.length - 1 : want.length;
  if (rest ? got.length <= fixed : got.length !== fixed) return false;
  for (let i = 0; i < fixed; i++) {
    if (want[i] !== '*' && want[i] !== got[i]) return false;
  }
  return true;
}

/** True when `subject` has any of the shapes (see `subjectOfShape`). */
export function subjectOfAnyShape(subject: unknown, patterns: readonly string[]): subject is string {
  return patterns.some((pattern) => subjectOfShape(subject, pattern));
}
