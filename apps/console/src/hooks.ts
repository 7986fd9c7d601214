import { useCallback, useEffect, useState } from 'react';
import { ok, type Answer } from './api';

export interface Loaded<T> {
  data?: T;
  error?: string;
  loading: boolean;
  reload: () => void;
}

/**
 * GET from the management API through the generated client, e.g.
 * `useApi(() => client.GET('/agents/{agentId}', { params: { path: { agentId } } }), [agentId])`;
 * again on reload() or when one of `deps` (what the call is made of) changes.
 */
export function useApi<T>(load: () => Promise<Answer<T>>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setState((previous) => ({ ...previous, loading: true }));
    ok(load()).then(
      (data) => live && setState({ data, loading: false }),
      (error: Error) => live && setState({ error: error.message, loading: false }),
    );
    return () => {
      live = false;
    };
    // `load` is a new function at each render: what it calls is named by `deps`.
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { ...state, reload };
}
/** The route: the part of the URL after `#`, still encoded, e.g. `/agents/demo-agent/keys` (`/` when empty). */
export function useRoute(): string {
  const read = () => window.location.hash.replace(/^#/, '') || '/';
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const changed = () => setRoute(read());
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}

/** Sets the document's title, so each page is announced by name. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · MCP gateway console`;
  }, [title]);
}

export type Said = { text: string; error?: boolean } | undefined;

/** Run a change, then say how it went (the API's refusal as it words it) and reload the list. */
export function useAction(reload: () => void): [Said, (run: () => Promise<unknown>, done: string) => Promise<void>] {
  const [said, setSaid] = useState<Said>();
  const act = async (run: () => Promise<unknown>, done: string) => {
    try {
      await run();
      setSaid({ text: done });
      reload();
    } catch (error) {
      setSaid({ text: (error as Error).message, error: true });
    }
  };
  return [said, act];
}
