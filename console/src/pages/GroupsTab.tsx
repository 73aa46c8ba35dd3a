import { useCallback, useState } from 'react';
import { appApi } from '../api/client';
import { ErrorLine, NextPage, useAnswer } from './common';

/** Groups, and one group's members (pages of 50). */
export function GroupsTab({ applicationId, groupId }: { applicationId: string; groupId?: string }) {
  const api = appApi(applicationId);
  const groups = useAnswer(useCallback(() => api.GET('/v1/groups'), [api]));
  if (groupId) return <Members applicationId={applicationId} groupId={groupId} />;
  if (groups.error) return <ErrorLine error={groups.error} />;
  if (!groups.data) return <p aria-busy="true">Loading…</p>;
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">ID</th>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {groups.data.map((group) => (
            <tr key={group.id}>
              <td>
                <a href={`#/apps/${applicationId}/groups/${encodeURIComponent(group.id)}`}>{group.id}</a>
              </td>
              <td>{group.name}</td>
              <td>{group.status}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Members({ applicationId, groupId }: { applicationId: string; groupId: string }) {
  const api = appApi(applicationId);
  const [token, setToken] = useState<string | undefined>();
  const members = useAnswer(
    useCallback(() => api.GET('/v1/groups/{groupID}/members', { params: { path: { groupID: groupId }, query: { limit: 50, token } } }), [api, groupId, token]),
  );
  return (
    <>
      <p>
        <a href={`#/apps/${applicationId}/groups`}>All groups</a>
      </p>
      <h2>Members of {groupId}</h2>
      <ErrorLine error={members.error} />
      <ul>
        {members.data?.users.map((user) => (
          <li key={user.id}>
            <a href={`#/apps/${applicationId}/users/${encodeURIComponent(user.id)}`}>{user.name ?? user.id}</a>
          </li>
        ))}
      </ul>
      <NextPage token={members.data?.pagination.token} onNext={setToken} />
    </>
  );
}
