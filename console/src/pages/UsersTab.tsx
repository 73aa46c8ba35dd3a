import { useCallback, useState, type FormEvent } from 'react';
import { appApi, errorMessage } from '../api/client';
import { ErrorLine, jsonField, NextPage, useAnswer, when } from './common';

const PAGE = 50;

/** Users: pages of 50, filtered by metadata, or one user by ID with their groups, preferences, presence and notifications. */
export function UsersTab({ applicationId, userId }: { applicationId: string; userId?: string }) {
  if (userId) return <UserView applicationId={applicationId} userId={userId} />;
  return <UserList applicationId={applicationId} />;
}

function UserList({ applicationId }: { applicationId: string }) {
  const [query, setQuery] = useState<{ filter?: string; token?: string }>({});
  const [formError, setFormError] = useState('');
  const api = appApi(applicationId);
  const load = useCallback(
    () => api.GET('/v1/users', { params: { query: { limit: PAGE, ...query } } }),
    [api, query],
  );
  const { data, error } = useAnswer(load);
  const users = data && !Array.isArray(data) ? data : null;

  const search = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const id = String(form.get('userId')).trim();
    if (id) {
      window.location.hash = `#/apps/${applicationId}/users/${encodeURIComponent(id)}`;
      return;
    }
    try {
      const metadata = jsonField('Metadata', String(form.get('metadata')));
      setFormError('');
      setQuery(metadata ? { filter: JSON.stringify({ metadata }) } : {});
    } catch (failure) {
      setFormError((failure as Error).message);
    }
  };

  return (
    <>
      <form onSubmit={search} aria-label="Find users">
        <div className="grid">
          <label>
            User ID
            <input name="userId" placeholder="Open one user" />
          </label>
          <label>
            Metadata
            <input name="metadata" placeholder='{"team": "support"}' />
          </label>
        </div>
        <button type="submit">Search</button>
      </form>
      <ErrorLine error={formError || error} />
      {!users ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <>
          <p className="muted">{users.pagination.total} users</p>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">ID</th>
                  <th scope="col">Name</th>
                  <th scope="col">E-mail</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {users.users.map((user) => (
                  <tr key={user.id}>
                    <td>
                      <a href={`#/apps/${applicationId}/users/${encodeURIComponent(user.id)}`}>{user.id}</a>
                    </td>
                    <td>{user.name}</td>
                    <td>{user.email}</td>
                    <td>{user.status}</td>
                    <td>{when(user.createdTimestamp)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <NextPage token={users.pagination.token} onNext={(token) => setQuery({ ...query, token })} />
        </>
      )}
    </>
  );
}

function UserView({ applicationId, userId }: { applicationId: string; userId: string }) {
  const api = appApi(applicationId);
  const path = { params: { path: { userID: userId } } };
  const user = useAnswer(useCallback(() => api.GET('/v1/users/{userID}', path), [api, userId]));
  const notifications = useAnswer(
    useCallback(() => api.GET('/v1/users/{userID}/notifications', { params: { path: { userID: userId }, query: { limit: 20 } } }), [api, userId]),
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
      {notifications.data && notifications.data.notifications.length === 0 && <p>None.</p>}
      <ul>
        {notifications.data?.notifications.map((notification) => (
          <li key={notification.id}>
            {notification.text}{' '}
            <span className="muted">{when(notification.timestamp)}</span>
          </li>
        ))}
      </ul>
    </>
  );
}

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
          <fieldset>
            <legend>Notify this user</legend>
            {CHANNELS.map(([name, label]) => (
              <label key={name}>
                <input type="checkbox" role="switch" name={name} defaultChecked={channels[name]} />
                {label}
              </label>
            ))}
          </fieldset>
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
  const locations = presence.data?.ephemeral.locations ?? [];
  const durable = presence.data?.durable;
  return (
    <section aria-labelledby="presence-heading">
      <h3 id="presence-heading">Presence</h3>
      <ErrorLine error={presence.error} />
      {!presence.data ? (
        !presence.error && <p aria-busy="true">Loading…</p>
      ) : locations.length === 0 && !durable ? (
        <p>Not present anywhere.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Location</th>
                <th scope="col">Presence</th>
                <th scope="col">Last seen</th>
              </tr>
            </thead>
            <tbody>
              {locations.map((location) => (
                <tr key={JSON.stringify(location)}>
                  <td>
                    <code>{JSON.stringify(location)}</code>
                  </td>
                  <td>here now</td>
                  <td>—</td>
                </tr>
              ))}
              {durable && (
                <tr>
                  <td>
                    <code>{JSON.stringify(durable.location)}</code>
                  </td>
                  <td>durable</td>
                  <td>{when(durable.timestamp)}</td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
