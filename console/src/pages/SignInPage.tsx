import { useEffect, useState, type FormEvent } from 'react';
import { consoleCall, type SessionView, type SignInOptions } from '../api/client';
import { Field } from '../components/Field';
import { ErrorLine } from './common';

/**
 * Sign-in as a customer (ID and secret) or as the operator (ADMIN_USERNAME and ADMIN_PASSWORD),
 * the operator's offered only when the deployment sets those.
 */
export function SignInPage({ onSignedIn }: { onSignedIn: (session: SessionView) => void }) {
  const [operator, setOperator] = useState(false);
  const [operatorOffered, setOperatorOffered] = useState(false);
  useEffect(() => {
    consoleCall<SignInOptions>('GET', '/sign-in').then(
      (options) => setOperatorOffered(options.operator),
      () => setOperatorOffered(false),
    );
  }, []);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const body = operator
      ? { username: String(form.get('username')), password: String(form.get('password')) }
      : { customerId: String(form.get('customerId')).trim(), secret: String(form.get('secret')) };
    setBusy(true);
    setError('');
    try {
      onSignedIn(await consoleCall<SessionView>('POST', '/session', body));
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="container">
      <article style={{ maxWidth: '32rem', margin: '2rem auto' }}>
        <h1>Sign in</h1>
        <form onSubmit={submit}>
          {operator ? (
            <>
              <Field label="User name" name="username" autoComplete="username" required />
              <Field label="Password" name="password" type="password" autoComplete="current-password" required />
            </>
          ) : (
            <>
              <Field label="Customer ID" name="customerId" autoComplete="username" required />
              <Field label="Customer secret" name="secret" type="password" autoComplete="current-password" required />
            </>
          )}
          <ErrorLine error={error} />
          <button type="submit" aria-busy={busy}>
            Sign in
          </button>
        </form>
        {operatorOffered && (
          <button type="button" className="secondary outline" onClick={() => setOperator(!operator)}>
            {operator ? 'Sign in as a customer' : 'Sign in as the operator'}
          </button>
        )}
      </article>
    </main>
  );
}
