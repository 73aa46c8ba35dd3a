import { useState } from 'react';
import { consoleCall } from '../api/client';
import { ErrorLine } from './common';

/** Mints a short-lived server token of this application, to paste into curl. */
export function TokenTab({ applicationId }: { applicationId: string }) {
  const [minted, setMinted] = useState<{ token: string; expiresAt: string } | null>(null);
  const [error, setError] = useState('');
  const [copied, setCopied] = useState(false);
  const mint = async () => {
    try {
      setMinted(await consoleCall<{ token: string; expiresAt: string }>('POST', `/applications/${applicationId}/token`));
      setCopied(false);
      setError('');
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  const curl = minted ? `curl -H "Authorization: Bearer ${minted.token}" ${window.location.origin}/v1/users` : '';
  return (
    <>
      <p>A server token acts as this application on the API. It is signed with the application's secret on the server and works for 15 minutes.</p>
      <ErrorLine error={error} />
      <button type="button" onClick={mint}>
        Mint a server token
      </button>
      {minted && (
        <article aria-label="Server token">
          <p>Valid until {new Date(minted.expiresAt).toLocaleString()}.</p>
          <pre tabIndex={0}>
            <code data-testid="curl">{curl}</code>
          </pre>
          <button
            type="button"
            className="secondary"
            onClick={async () => {
              await navigator.clipboard.writeText(curl);
              setCopied(true);
            }}
          >
            {copied ? 'Copied' : 'Copy command'}
          </button>
        </article>
      )}
    </>
  );
}
