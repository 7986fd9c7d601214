export type HeaderValue = { ok: true; value: string } | { ok: false; problem: string };

/**
 * A header value as sent: `=?base64?<base64 of UTF-8>?=`, decoded (strict
 * alphabet and padding), or else the literal, which must be visible ASCII,
 * spaces and tabs (RFC 9110 field values; anything else must travel encoded).
 */
export function decodeHeaderValue(raw: string): HeaderValue {
  const encoded = /^=\?base64\?(.*)\?=$/s.exec(raw);
  if (!encoded) {
    return /^[\x20-\x7e\t]*$/.test(raw)
      ? { ok: true, value: raw }
      : { ok: false, problem: 'holds characters a header may not carry unencoded' };
  }
  const base64 = encoded[1];
  if (base64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) {
    return { ok: false, problem: 'is not valid Base64 (alphabet A-Z a-z 0-9 + /, padded with = to a multiple of 4)' };
  }
  const bytes = Buffer.from(base64, 'base64');
  const value = bytes.toString('utf8');
  if (!Buffer.from(value, 'utf8').equals(bytes)) return { ok: false, problem: 'is not Base64 of UTF-8 text' };
  return { ok: true, value };
}
