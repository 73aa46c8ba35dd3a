import { useCallback, useState, type FormEvent } from 'react';
import { appApi, errorMessage } from '../api/client';
import type { components } from '../api/schema';
import { DataTable, useCursor, type Column } from '../components/DataTable';
import { CheckboxGroup, Field } from '../components/Field';
import { ErrorLine, jsonField, useAnswer, when } from './common';

const PAGE = 50;

/** Users: pages of 50, found by ID, name, e-mail and metadata, or one user by ID with their groups, preferences, presence and notifications. */
export function UsersTab({ applicationId, userId }: { applicationId: string; userId?: string }) {
  if (userId) return <UserView applicationId={applicationId} userId={userId} />;
  return <UserList applicationId={applicationId} />;
}

function UserList({ applicationId }: { applicationId: string }) {
  const [query, setQuery] = useState<{ search?: string; filter?: string }>({});
  const [formError, setFormError] = useState('');
  const cursor = useCursor();
  const api = appApi(applicationId);
  const load = useCallback(
    () => api.GET('/v1/users', { params: { query: { limit: PAGE, ...query, token: cursor.token } } }),
    [api, query, cursor.token],
  );
  const { data, error } = useAnswer(load);
  const users = data && !Array.isArray(data) ? data : null;

  const search = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    try {
      const metadata = jsonField('Metadata', String(form.get('metadata')));
      const search = String(form.get('search')).trim();
      setFormError('');
      cursor.first();
      setQuery({ ...(search ? { search } : {}), ...(metadata ? { filter: JSON.stringify({ metadata }) } : {}) });
    } catch (failure) {
      setFormError((failure as Error).message);
    }
  };

  return (
    <>
      <form onSubmit={search} aria-label="Find users">
        <div className="grid">
          <Field label="ID, name or e-mail" name="search" type="search" placeholder="Contains…" />
          <Field label="Metadata" name="metadata" placeholder='{"team": "support"}' />
        </div>
        <button type="submit">Search</button>
      </form>
      <ErrorLine error={formError || error} />
      {users && <p className="muted">{users.pagination.total} users</p>}
      <DataTable
        columns={USER_COLUMNS(applicationId)}
        rows={users?.users}
        rowKey={(user) => user.id}
        empty="No users."
        cursor={cursor}
        nextToken={users?.pagination.token}
      />
    </>
  );
}

const USER_COLUMNS = (applicationId: string): Column<components['schemas']['User']>[] => [
  { header: 'ID', cell: (user) => <a href={`#/apps/${applicationId}/users/${encodeURIComponent(user.id)}`}>{user.id}</a> },
  { header: 'Name', cell: (user) => user.name },
  { header: 'E-mail', cell: (user) => user.email },
  { header: 'Status', cell: (user) => user.status },
  { header: 'Created', cell: (user) => when(user.createdTimestamp) },
];

function UserView({ applicationId, userId }: { applicationId: string; userId: string }) {
  const api = appApi(applicationId);
  const path = { params: { path: { userID: userId } } };
  const user = useAnswer(useCallback(() => api.GET('/v1/users/{userID}', path), [api, userId]));
  const cursor = useCursor();
  const notifications = useAnswer(
    useCallback(
      () => api.GET('/v1/users/{userID}/notifications', { params: { path: { userID: userId }, query: { limit: 20, token: cursor.token } } }),
      [api, userId, cursor.token],
    ),
  );
  const [error, setError] = useState('');

  const setStatus = async (status: 'active' | 'deleted') => {
    const { error: failure } = await api.PUT('/v1/users/{userID}', { ...path, body: { status } });
    if (failure) setError(String((failure as { message?: string }).message));
    else await user.reload();
  };

  if (user.error) return <ErrorLine error={user.error} />;
  if (!user.data) return <p aria-busy="true">Loading…</p>;
  const details = user.data;
  return (
    <>
      <p>
        <a href={`#/apps/${applicationId}/users`}>All users</a>
      </p>
      <h2>{details.name ?? details.id}</h2>
      <ErrorLine error={error} />
      <dl>
        <dt>ID</dt>
        <dd className="secret">{details.id}</dd>
        <dt>E-mail</dt>
        <dd>{details.email ?? '—'}</dd>
        <dt>Status</dt>
        <dd>{details.status}</dd>
        <dt>Metadata</dt>
        <dd>
          <code>{JSON.stringify(details.metadata)}</code>
        </dd>
        <dt>Groups</dt>
        <dd>
          {details.groups.length === 0
            ? 'none'
            : details.groups.map((group) => (
                <a key={group} href={`#/apps/${applicationId}/groups/${encodeURIComponent(group)}`} style={{ marginRight: '0.75rem' }}>
                  {group}
                </a>
              ))}
        </dd>
      </dl>
      {details.status === 'active' ? (
        <button type="button" className="secondary" onClick={() => setStatus('deleted')}>
          Mark deleted
        </button>
      ) : (
        <button type="button" className="secondary" onClick={() => setStatus('active')}>
          Mark active
        </button>
      )}
      <Preferences applicationId={applicationId} userId={userId} />
      <Presence applicationId={applicationId} userId={userId} />
      <h3>Notifications</h3>
      <ErrorLine error={notifications.error} />
      <DataTable
        columns={NOTIFICATION_COLUMNS}
        rows={notifications.data?.notifications}
        rowKey={(notification) => notification.id}
        empty="None."
        cursor={cursor}
        nextToken={notifications.data?.pagination.token}
      />
    </>
  );
}

const NOTIFICATION_COLUMNS: Column<components['schemas']['Notification']>[] = [
  { header: 'Notification', cell: (notification) => notification.text },
  { header: 'When', cell: (notification) => when(notification.timestamp) },
];

const CHANNELS = [
  ['sendViaEmail', 'By e-mail'],
  ['sendViaSlack', 'By Slack'],
] as const;

/** The user's notification preferences: both channels, changed through PUT (a channel not sent keeps its value). */
function Preferences({ applicationId, userId }: { applicationId: string; userId: string }) {
  const api = appApi(applicationId);
  const preferences = useAnswer(useCallback(() => api.GET('/v1/users/{userID}/preferences', { params: { path: { userID: userId } } }), [api, userId]));
  const [saved, setSaved] = useState('');
  const [error, setError] = useState('');

  const save = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setSaved('');
    const { error: failure } = await api.PUT('/v1/users/{userID}/preferences', {
      params: { path: { userID: userId } },
      body: { key: 'notification_channels', value: { sendViaEmail: form.has('sendViaEmail'), sendViaSlack: form.has('sendViaSlack') } },
    });
    if (failure) return setError(errorMessage(failure));
    setError('');
    await preferences.reload();
    setSaved('Preferences saved.');
  };

  const channels = preferences.data?.notification_channels;
  return (
    <section aria-labelledby="preferences-heading">
      <h3 id="preferences-heading">Notification preferences</h3>
      <ErrorLine error={preferences.error || error} />
      {!channels ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        // Keyed by the stored values so that the boxes show them again after a save.
        <form key={JSON.stringify(channels)} onSubmit={save} aria-label="Notification preferences">
          <CheckboxGroup legend="Notify this user" options={CHANNELS} name={(name) => name} checked={(name) => channels[name]} switches />
          <button type="submit">Save preferences</button>
          <p role="status" className="muted">
            {saved}
          </p>
        </form>
      )}
    </section>
  );
}

/** Where the user is present now, in every group of theirs: the empty location, partly matched, matches all. */
function Presence({ applicationId, userId }: { applicationId: string; userId: string }) {
  const api = appApi(applicationId);
  const presence = useAnswer(
    useCallback(
      () => api.GET('/v1/users/{userID}/presence', { params: { path: { userID: userId }, query: { location: '{}', partial_match: 'true' } } }),
      [api, userId],
    ),
  );
  const durable = presence.data?.durable;
  const rows: PresenceRow[] | null = presence.data && [
    ...presence.data.ephemeral.locations.map((location) => ({ location, presence: 'here now', lastSeen: null })),
    ...(durable ? [{ location: durable.location, presence: 'durable', lastSeen: durable.timestamp }] : []),
  ];
  return (
    <section aria-labelledby="presence-heading">
      <h3 id="presence-heading">Presence</h3>
      <ErrorLine error={presence.error} />
      {!presence.error && (
        <DataTable columns={PRESENCE_COLUMNS} rows={rows} rowKey={(row) => `${row.presence} ${JSON.stringify(row.location)}`} empty="Not present anywhere." />
      )}
    </section>
  );
}

interface PresenceRow {
  location: unknown;
  presence: string;
  lastSeen: string | null;
}
const PRESENCE_COLUMNS: Column<PresenceRow>[] = [
  { header: 'Location', cell: (row) => <code>{JSON.stringify(row.location)}</code> },
  { header: 'Presence', cell: (row) => row.presence },
  { header: 'Last seen', cell: (row) => when(row.lastSeen) },
];
