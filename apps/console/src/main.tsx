import { StrictMode, useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { client, ok, whenUnauthorized, type Session } from './api';
import { Layout } from './layout';
import { Login, redeemLoginLink } from './pages/login';
import { PageFor } from './pages';
import './styles.css';

/** Logged in (the session), logged out, or not known yet (the first GET /admin/v1/session). */
function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [linkError, setLinkError] = useState<string>();
  const check = useCallback(() => {
    ok(client.GET('/session')).then(setSession, () => setSession(null));
  }, []);
  useEffect(() => {
    whenUnauthorized(() => setSession(null));
    // A login link's code first (if the address holds one), then "am I logged in".
    void redeemLoginLink().then((refused) => {
      if (refused) setLinkError(refused);
      check();
    });
  }, [check]);
  if (session === undefined) return <p className="loading">Loading…</p>;
  if (session === null) return <Login onLoggedIn={check} linkError={linkError} />;
  const logout = () => {
    void ok(client.DELETE('/session'))
      .catch(() => undefined)
      .finally(() => setSession(null));
  };
  return (
    <Layout session={session} onLogout={logout}>
      <PageFor />
    </Layout>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
