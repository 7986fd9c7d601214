import type { ReactNode } from 'react';
import type { Session } from './api';
import { useRoute } from './hooks';
import { NAV } from './routes';

/** The frame of every page once logged in: a skip link, the header, the navigation, the page. */
export function Layout({
  session,
  onLogout,
  children,
}: {
  session: Session;
  onLogout: () => void;
  children: ReactNode;
}) {
  const route = useRoute();
  return (
    <>
      <a className="skip" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <header className="top">
        <p className="brand">MCP gateway console</p>
        <p className="who">
          Admin token <code>{session.token_id}</code>
          {session.expires_at && <> · session ends {new Date(session.expires_at).toLocaleString()}</>}
        </p>
        <button type="button" onClick={onLogout}>
          Log out
        </button>
      </header>
      <nav aria-label="Console">
        <ul>
          {NAV.map((entry) => (
            <li key={entry.href}>
              <a href={entry.href} aria-current={entry.match.test(route.split('?')[0]) ? 'page' : undefined}>
                {entry.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}

/** The skip link moves focus to the page without changing the hash route. */
function skipToMain(event: { preventDefault: () => void }) {
  event.preventDefault();
  document.getElementById('main')?.focus();
}
