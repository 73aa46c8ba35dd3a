import { useCallback, useEffect, useState } from 'react';
import { errorMessage } from '../api/client';

/** The answer of an API call, loaded again whenever `load` changes; `reload` loads it again now. */
export function useAnswer<T>(load: () => Promise<{ data?: T; error?: unknown }>) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState('');
  const reload = useCallback(async () => {
    const answer = await load();
    if (answer.error !== undefined || answer.data === undefined) setError(errorMessage(answer.error));
    else {
      setError('');
      setData(answer.data);
    }
  }, [load]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, reload };
}

export function ErrorLine({ error }: { error: string }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {error}
    </p>
  );
}

/**
 * A page of a list whose body is a bare array (threads, groups): the next page's token comes in the
 * Link header, the total in X-Total-Count.
 */
export function arrayPage<T>(data: T[], response: Response) {
  const link = /[?&]token=([^&>]+)/.exec(response.headers.get('link') ?? '');
  return { rows: data, next: link ? decodeURIComponent(link[1]!) : null, total: Number(response.headers.get('x-total-count') ?? data.length) };
}

export const when = (timestamp: string | null | undefined) => (timestamp ? new Date(timestamp).toLocaleString() : '—');

/** A JSON object typed in a text field, or undefined when the field is empty; throws with a clear message. */
export function jsonField(name: string, text: string): Record<string, unknown> | undefined {
  if (!text.trim()) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new Error(`${name} must be a JSON object, e.g. {"key": "value"}.`);
}
