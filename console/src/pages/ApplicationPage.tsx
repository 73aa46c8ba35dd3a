import { useCallback, useEffect, useState } from 'react';
import { customerApi, errorMessage } from '../api/client';
import type { components } from '../api/schema';
import { SettingsTab } from './SettingsTab';

export type Application = components['schemas']['Application'];

const TABS = [['settings', 'Settings']] as const;

/** One application: its tabs. */
export function ApplicationPage({ applicationId, tab }: { applicationId: string; tab: string; rest: string[] }) {
  const [application, setApplication] = useState<Application | null>(null);
  const [error, setError] = useState('');

  const load = useCallback(async () => {
    const { data, error: failure } = await customerApi.GET('/v1/applications/{applicationID}', {
      params: { path: { applicationID: applicationId } },
    });
    if (failure) setError(errorMessage(failure));
    else setApplication(data);
  }, [applicationId]);
  useEffect(() => {
    void load();
  }, [load]);

  if (error)
    return (
      <p role="alert" className="error">
        {error}
      </p>
    );
  if (!application) return <p aria-busy="true">Loading…</p>;
  return (
    <>
      <hgroup>
        <h1>{application.name}</h1>
        <p className="secret">{application.id}</p>
      </hgroup>
      <nav aria-label="Application">
        <ul>
          {TABS.map(([id, label]) => (
            <li key={id}>
              <a href={`#/apps/${applicationId}/${id}`} aria-current={tab === id ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {tab === 'settings' && <SettingsTab application={application} onChanged={load} />}
    </>
  );
}
