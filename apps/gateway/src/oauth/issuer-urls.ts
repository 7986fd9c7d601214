/**
 * OAUTH_ISSUERS, parsed: each an absolute URL without query or fragment,
 * `https`, or `http` on a loopback address only (a token's keys fetched over
 * plain HTTP from elsewhere could be anyone's). Throws saying what is wrong.
 */
export function parseIssuers(value: string): string[] {
  const issuers = value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  for (const issuer of issuers) {
    const problem = unsafeUrl(issuer);
    if (problem) throw new Error(`OAUTH_ISSUERS: ${issuer}: ${problem}`);
  }
  return issuers;
}

/** Why a URL of an issuer (or of its keys) may not be used, if it may not. */
export function unsafeUrl(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not an absolute URL';
  }
  if (url.search || url.hash) return 'must have no query or fragment';
  if (url.username || url.password) return 'must hold no credentials';
  return secureTransport(url) ? undefined : 'must be https (http only on a loopback address)';
}

/** https, or http to a loopback address: a transport an issuer's answers may come over. */
export function secureTransport(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url.hostname));
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}
