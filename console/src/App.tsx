import { useCallback, useEffect, useState } from 'react';
import { consoleCall, setCsrfToken, type SessionView } from './api/client';
import { ApplicationPage } from './pages/ApplicationPage';
import { ApplicationsPage } from './pages/ApplicationsPage';
import { DataPage } from './pages/DataPage';
import { OperatorPage } from './pages/OperatorPage';
import { SignInPage } from './pages/SignInPage';

/** The page a hash names: #/ (applications), #/apps/<id>/<tab>, #/operator. */
function useHashRoute(): string[] {
  const read = () => window.location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export function App() {
  const [session, setSession] = useState<SessionView | null | undefined>(undefined);
  const route = useHashRoute();

  const signedIn = useCallback((view: SessionView | null) => {
    if (view) setCsrfToken(view.csrfToken);
    setSession(view);
  }, []);

  useEffect(() => {
    consoleCall<SessionView>('GET', '/session').then(signedIn, () => signedIn(null));
  }, [signedIn]);

  if (session === undefined) return <main className="container" aria-busy="true" />;
  if (session === null) return <SignInPage onSignedIn={signedIn} />;

  const signOut = async () => {
    await consoleCall('DELETE', '/session');
    window.location.hash = '#/';
    signedIn(null);
  };

  let page;
  if (session.kind === 'operator') page = <OperatorPage />;
  else if (route[0] === 'apps' && route[1]) page = <ApplicationPage applicationId={route[1]} tab={route[2] ?? 'settings'} rest={route.slice(3)} />;
  else if (route[0] === 'data') page = <DataPage />;
  else page = <ApplicationsPage />;

  return (
    <>
      <header className="bar container">
        <nav aria-label="Main">
          <ul>
            <li>
              <a href="#/"><strong>collab console</strong></a>
            </li>
            {session.kind === 'customer' && (
              <li>
                <a href="#/data">Import and export</a>
              </li>
            )}
          </ul>
        </nav>
        <div className="row">
          <span className="muted">{session.kind === 'operator' ? 'Operator' : `Customer ${session.customerId}`}</span>
          <button type="button" className="secondary outline" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main className="container">{page}</main>
    </>
  );
}
