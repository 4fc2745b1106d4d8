// Token mode asks for a bearer token, as the Kubernetes Dashboard and Headlamp do; local mode
// says to open the URL the command printed.
import { useState, type FormEvent } from 'react';
import { failureOf } from '../api.js';

export function LoginPage(props: { mode: string; message: string; onLogin: () => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  if (props.mode === 'local') {
    return (
      <main className="login">
        <h1>simlock console</h1>
        <p role="alert">
          {props.message}: the one `kubectl simlock console` printed, with its key.
        </p>
      </main>
    );
  }
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    void (async () => {
      const response = await fetch('/api/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-simlock-console': '1' },
        body: JSON.stringify({ token: token.trim() }),
      });
      if (response.ok) return props.onLogin();
      const failure = await failureOf(response);
      setError(`${failure.code}: ${failure.message} (HTTP ${failure.status})`);
    })().finally(() => setBusy(false));
  };
  return (
    <main className="login">
      <h1>simlock console</h1>
      <form onSubmit={submit} aria-describedby="login-help">
        <p id="login-help">
          Log in with a bearer token: what you see and do is what the cluster allows that token. For
          a ServiceAccount: <code>kubectl create token NAME</code>.
        </p>
        <label htmlFor="token">Bearer token</label>
        <textarea
          id="token"
          name="token"
          rows={4}
          value={token}
          onChange={(event) => setToken(event.target.value)}
          required
          autoComplete="off"
          spellCheck={false}
        />
        <button type="submit" disabled={busy || token.trim().length === 0}>
          Log in
        </button>
        {error ? (
          <p role="alert" className="error">
            {error}
          </p>
        ) : null}
      </form>
    </main>
  );
}
