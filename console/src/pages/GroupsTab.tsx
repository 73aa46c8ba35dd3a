import { useCallback } from 'react';
import { appApi } from '../api/client';
import type { components } from '../api/schema';
import { DataTable, useCursor, type Column } from '../components/DataTable';
import { arrayPage, ErrorLine, useAnswer } from './common';

/** Groups and one group's members, in pages of 50. */
export function GroupsTab({ applicationId, groupId }: { applicationId: string; groupId?: string }) {
  if (groupId) return <Members applicationId={applicationId} groupId={groupId} />;
  return <GroupList applicationId={applicationId} />;
}

function GroupList({ applicationId }: { applicationId: string }) {
  const api = appApi(applicationId);
  const cursor = useCursor();
  const page = useAnswer(
    useCallback(async () => {
      const { data, error, response } = await api.GET('/v1/groups', { params: { query: { limit: 50, token: cursor.token } } });
      return error !== undefined || !data ? { error } : { data: arrayPage(data, response) };
    }, [api, cursor.token]),
  );
  return (
    <>
      <ErrorLine error={page.error} />
      {page.data && <p className="muted">{page.data.total} groups</p>}
      <DataTable
        columns={groupColumns(applicationId)}
        rows={page.data?.rows}
        rowKey={(group) => group.id}
        empty="No groups."
        cursor={cursor}
        nextToken={page.data?.next}
      />
    </>
  );
}

const groupColumns = (applicationId: string): Column<components['schemas']['Group']>[] => [
  { header: 'ID', cell: (group) => <a href={`#/apps/${applicationId}/groups/${encodeURIComponent(group.id)}`}>{group.id}</a> },
  { header: 'Name', cell: (group) => group.name },
  { header: 'Status', cell: (group) => group.status },
];

function Members({ applicationId, groupId }: { applicationId: string; groupId: string }) {
  const api = appApi(applicationId);
  const cursor = useCursor();
  const members = useAnswer(
    useCallback(
      () => api.GET('/v1/groups/{groupID}/members', { params: { path: { groupID: groupId }, query: { limit: 50, token: cursor.token } } }),
      [api, groupId, cursor.token],
    ),
  );
  return (
    <>
      <p>
        <a href={`#/apps/${applicationId}/groups`}>All groups</a>
      </p>
      <h2>Members of {groupId}</h2>
      <ErrorLine error={members.error} />
      <DataTable
        columns={memberColumns(applicationId)}
        rows={members.data?.users}
        rowKey={(user) => user.id}
        empty="No members."
        cursor={cursor}
        nextToken={members.data?.pagination.token}
      />
    </>
  );
}

const memberColumns = (applicationId: string): Column<components['schemas']['GroupMember']>[] => [
  { header: 'ID', cell: (user) => <a href={`#/apps/${applicationId}/users/${encodeURIComponent(user.id)}`}>{user.id}</a> },
  { header: 'Name', cell: (user) => user.name },
];
