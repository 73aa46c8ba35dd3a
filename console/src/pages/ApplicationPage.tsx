import { useCallback, useEffect, useState } from 'react';
import { customerApi, errorMessage, type Application } from '../api/client';
import { ErrorLine } from './common';
import { GroupsTab } from './GroupsTab';
import { SettingsTab } from './SettingsTab';
import { ThreadsTab } from './ThreadsTab';
import { TokenTab } from './TokenTab';
import { UsersTab } from './UsersTab';
import { WebhooksTab } from './WebhooksTab';

const TABS = [
  ['settings', 'Settings'],
  ['users', 'Users'],
  ['groups', 'Groups'],
  ['threads', 'Threads'],
  ['webhooks', 'Webhooks'],
  ['token', 'Token'],
] as const;

/** One application: its tabs. */
export function ApplicationPage({ applicationId, tab, rest }: { applicationId: string; tab: string; rest: string[] }) {
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

  if (error) return <ErrorLine error={error} />;
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
      {tab === 'users' && <UsersTab applicationId={application.id} userId={rest[0]} />}
      {tab === 'groups' && <GroupsTab applicationId={application.id} groupId={rest[0]} />}
      {tab === 'threads' && <ThreadsTab applicationId={application.id} threadId={rest[0]} />}
      {tab === 'token' && <TokenTab applicationId={application.id} />}
      {tab === 'webhooks' && <WebhooksTab applicationId={application.id} deliveryId={rest[0]} />}
    </>
  );
}
