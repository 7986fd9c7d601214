import { StrictMode, useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { api, whenUnauthorized, type Session } from './api';
import { Layout } from './layout';
import { Login } from './pages/login';
import { PageFor } from './pages';
import './styles.css';

/** Logged in (the session), logged out, or not known yet (the first GET /admin/v1/session). */
function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const check = useCallback(() => {
    api<Session>('GET', '/session').then(setSession, () => setSession(null));
  }, []);
  useEffect(() => {
    whenUnauthorized(() => setSession(null));
    check();
  }, [check]);
  if (session === undefined) return <p className="loading">Loading…</p>;
  if (session === null) return <Login onLoggedIn={check} />;
  const logout = () => {
    api('DELETE', '/session').finally(() => setSession(null));
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
