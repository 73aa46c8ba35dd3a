import { useState } from 'react';

/** A secret shown once, with a copy button. */
export function SecretNotice({ title, secret, children }: { title: string; secret: string; children?: React.ReactNode }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(secret);
    setCopied(true);
  };
  return (
    <article aria-label={title}>
      <header>
        <strong>{title}</strong>
      </header>
      <p>Copy it now: it is not shown again.</p>
      <p className="secret" data-testid="secret">
        {secret}
      </p>
      {children}
      <button type="button" onClick={copy}>
        {copied ? 'Copied' : 'Copy secret'}
      </button>
    </article>
  );
}
