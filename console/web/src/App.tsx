// The console's frame: who is looking (or the login), the navigation, and the page of the path.
import { useEffect, useState } from 'react';
import { liveness } from '../../model/views.js';
import { Abilities } from '../../model/wire.js';
import { failureOf, post } from './api.js';
import { useLive } from './live.js';
import { AttentionLink, AttentionPage } from './pages/Attention.js';
import { EventsPage } from './pages/Events.js';
import { FeedNotes } from './pages/FeedNotes.js';
import { FleetPage } from './pages/Fleet.js';
import { LeasesPage } from './pages/Leases.js';
import { LoginPage } from './pages/Login.js';
import { RequestPage } from './pages/Request.js';
import { RequestsPage } from './pages/Requests.js';
import { UsagePage } from './pages/Usage.js';
import { Link, navigate, usePath } from './router.js';

type Session =
  | { state: 'checking' }
  | { state: 'in'; abilities: Abilities }
  | { state: 'out'; mode: string; message: string };

export function App() {
  const [session, setSession] = useState<Session>({ state: 'checking' });
  const check = () => {
    void (async () => {
      const response = await fetch('/api/session');
      if (response.ok) {
        const abilities = Abilities.safeParse(await response.json());
        if (abilities.success) return setSession({ state: 'in', abilities: abilities.data });
      }
      const failure = await failureOf(response);
      const mode = response.headers.get('x-simlock-mode') ?? 'token';
      setSession({ state: 'out', mode, message: failure.message });
    })().catch((error: unknown) =>
      setSession({ state: 'out', mode: 'token', message: String(error) }),
    );
  };
  useEffect(check, []);

  if (session.state === 'checking') return <p className="loading">Loading…</p>;
  if (session.state === 'out')
    return <LoginPage mode={session.mode} message={session.message} onLogin={check} />;
  return <Shell initial={session.abilities} />;
}

function Shell({ initial }: { initial: Abilities }) {
  const path = usePath();
  const state = useLive();
  const abilities = state.abilities ?? initial;
  useEffect(() => {
    if (path === '/') navigate('/requests');
  }, [path]);
  const requestPage = /^\/requests\/([^/]+)\/([^/]+)$/.exec(path);
  const page = requestPage ? (
    <RequestPage
      namespace={decodeURIComponent(requestPage[1] ?? '')}
      name={decodeURIComponent(requestPage[2] ?? '')}
    />
  ) : path.startsWith('/fleet') ? (
    <FleetPage abilities={abilities} />
  ) : path.startsWith('/leases') ? (
    <LeasesPage abilities={abilities} />
  ) : path.startsWith('/attention') ? (
    <AttentionPage abilities={abilities} />
  ) : path.startsWith('/events') ? (
    <EventsPage />
  ) : path.startsWith('/usage') ? (
    <UsagePage />
  ) : (
    <RequestsPage abilities={abilities} />
  );
  const status = liveness(state.stream, state.feed);
  const logout = () => {
    void post('/api/logout').finally(() => window.location.assign('/'));
  };
  return (
    <>
      <header>
        <span className="brand">simlock</span>
        <nav aria-label="Pages">
          <Link href="/fleet">Fleet</Link>
          <Link href="/requests">Requests</Link>
          <Link href="/leases">Leases</Link>
          <AttentionLink />
          <Link href="/events">Events</Link>
          <Link href="/usage">Usage</Link>
        </nav>
        <span className="who">
          <span
            role="status"
            aria-live="polite"
            className={`connection ${status.live ? 'live' : 'not-live'}`}
          >
            {status.text}
          </span>{' '}
          {abilities.user}
          {abilities.mode === 'token' ? (
            <button type="button" className="link" onClick={logout}>
              Log out
            </button>
          ) : null}
        </span>
      </header>
      <main>
        <FeedNotes feed={state.feed} />
        {page}
      </main>
    </>
  );
}
