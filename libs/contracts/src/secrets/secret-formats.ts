/**
 * The shapes of our bearer secrets, in one place: libs/grants mints and checks
 * them, libs/observability scrubs them out of every log line. (Here, not in
 * libs/grants, because the log library may depend on the contracts only.)
 */

/** Agent API keys: `bak_<id>_<secret>` (libs/grants `api-keys.ts`). */
export const API_KEY_PREFIX = 'bak_';
/** Personal access tokens: `pat_<id>_<secret>` (libs/grants `personal-access-tokens.ts`). */
export const PAT_PREFIX = 'pat_';
/** Admin tokens of the management API: `adm_<id>_<secret>` (libs/grants `admin-tokens.ts`). */
export const ADMIN_TOKEN_PREFIX = 'adm_';
/** Browser sessions of the management API, in a cookie: `ads_<id>_<secret>` (libs/grants `admin-tokens.ts`). */
export const ADMIN_SESSION_PREFIX = 'ads_';
/** One-time login codes of the console (`npm start`'s login link): `adl_<id>_<secret>` (libs/grants `admin-tokens.ts`). */
export const ADMIN_LOGIN_CODE_PREFIX = 'adl_';
/** The public id of a token: 9 random bytes, base64url. */
export const TOKEN_ID_LENGTH = 12;
/** The secret part: 32 random bytes, base64url. */
export const TOKEN_SECRET_LENGTH = 43;

/** A secret as it may appear anywhere in a text, and what it becomes in a log. */
export interface SecretPattern {
  name: string;
  /** Global; tried on every log line. */
  pattern: RegExp;
  replace: (match: string, ...groups: (string | undefined)[]) => string;
}

const B64URL = '[A-Za-z0-9_-]';

/**
 * `bak_`/`pat_`/`adm_`/`ads_`/`adl_` tokens keep their prefix and public id (`bak_<id>_…`), so that a
 * log still says which key; a malformed one (no id to keep) becomes `bak_…`.
 * RuntimeGrants (JWTs: `eyJ<header>.<payload>.<signature>`) become `[jwt]`.
 * No word boundary is required before a secret: in a JSON line it may follow an
 * escape (`\nbak_…`), and cutting a little too much from a log costs nothing.
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    name: 'token',
    pattern: new RegExp(
      // The second branch is atomic (lookahead + backreference), so that `bak_<id>_…` stays as it is.
      `(${API_KEY_PREFIX}|${PAT_PREFIX}|${ADMIN_TOKEN_PREFIX}|${ADMIN_SESSION_PREFIX}|${ADMIN_LOGIN_CODE_PREFIX})(?:(${B64URL}{${TOKEN_ID_LENGTH}})_${B64URL}{8,}|(?=(${B64URL}{8,}))\\3(?!…))`,
      'g',
    ),
    replace: (_match, prefix, id) => (id ? `${prefix}${id}_…` : `${prefix}…`),
  },
  {
    name: 'jwt',
    pattern: new RegExp(`eyJ${B64URL}{4,}\\.${B64URL}+(?:\\.${B64URL}*)?`, 'g'),
    replace: () => '[jwt]',
  },
];

/** `text` with every secret of SECRET_PATTERNS (or of `patterns`) cut down to what may be logged. */
export function redactSecrets(text: string, patterns: readonly SecretPattern[] = SECRET_PATTERNS): string {
  let out = text;
  for (const { pattern, replace } of patterns) {
    pattern.lastIndex = 0;
    out = out.replace(pattern, replace as (substring: string, ...args: unknown[]) => string);
  }
  return out;
}
