import { useEffect, useState, type FormEvent } from 'react';
import { ApiError, client, ok } from '../api';
import { useTitle } from '../hooks';

/**
 * Log in with an admin token (npm run admin -- console token). The token goes to
 * POST /admin/v1/session once and is dropped: the browser keeps the HttpOnly
 * session cookie, never the token.
 */
export function Login({ onLoggedIn, linkError }: { onLoggedIn: () => void; linkError?: string }) {
  useTitle('Log in');
  const [error, setError] = useState<string | undefined>(linkError);
  const [busy, setBusy] = useState(false);
  const [oidc, setOidc] = useState<{ issuer: string } | null>(null);
  useEffect(() => {
    ok(client.GET('/session/options')).then(
      (options) => setOidc(options.oidc),
      () => setOidc(null),
    );
  }, []);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const field = form.elements.namedItem('token') as HTMLInputElement;
    const token = field.value.trim();
    field.value = '';
    setBusy(true);
    setError(undefined);
    try {
      await ok(client.POST('/session', { body: { token } }));
      onLoggedIn();
    } catch (failure) {
      setError(
        failure instanceof ApiError && failure.status === 401
          ? 'That token was refused: it is wrong, expired or revoked.'
          : (failure as Error).message,
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" className="login">
      <h1>MCP gateway console</h1>
      <form onSubmit={submit} aria-describedby="login-help">
        <label htmlFor="token">Admin token</label>
        <input id="token" name="token" type="password" autoComplete="off" spellCheck={false} required />
        <p id="login-help" className="help">
          Mint one with <code>npm run admin -- console token</code>. It is not kept by this page.
        </p>
        <button type="submit" disabled={busy}>
          Log in
        </button>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
      </form>
      {oidc && (
        <p className="sso">
          Or <a href="/admin/v1/session/oidc">log in with single sign-on</a> ({oidc.issuer}).
        </p>
      )}
    </main>
  );
}

/**
 * The login link `npm start` prints (`/console/#login=adl_…`): its one-time code
 * is taken out of the address at once (replaceState: not kept in the history,
 * never sent to a server as part of a URL) and exchanged for a session, once.
 * Undefined when the address holds no code; else the refusal's text, or ''.
 */
export async function redeemLoginLink(): Promise<string | undefined> {
  const match = /^#login=([A-Za-z0-9_-]+)$/.exec(window.location.hash);
  if (!match) return undefined;
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
  try {
    await ok(client.POST('/session', { body: { login_code: match[1] } }));
    return '';
  } catch (failure) {
    return failure instanceof ApiError && failure.status === 401
      ? 'That login link was refused: it was used already, or it expired. Run npm start again, or log in with a token.'
      : (failure as Error).message;
  }
}
