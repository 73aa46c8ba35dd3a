/** The group objects of the API; chat workspaces do not exist here. */
import type { groupDetailsView, groupListItemView, ViewAnswer } from '@collab/shared';
import type { GroupRow } from '../../entities/index.js';

/** Never connected to a chat workspace, under the API document's name and the original's. */
const chatConnection = () => ({ connectedToChat: false, connectedToSlack: false });

export function groupListItem(group: GroupRow): ViewAnswer<typeof groupListItemView> {
  return {
    id: group.externalId,
    name: group.name,
    status: group.status,
    ...chatConnection(),
    metadata: group.metadata,
  };
}

export function groupDetails(group: GroupRow, memberIds: string[]): ViewAnswer<typeof groupDetailsView> {
  return {
    id: group.externalId,
    name: group.name,
    status: group.status,
    members: memberIds,
    ...chatConnection(),
    metadata: group.metadata,
  };
}
