/** The group objects of the API; chat workspaces do not exist here. */
import type { GroupRow } from '../../entities/index.js';

export function groupListItem(group: GroupRow) {
  return {
    id: group.externalId,
    name: group.name,
    status: group.status,
    connectedToChat: false,
    metadata: group.metadata,
  };
}

export function groupDetails(group: GroupRow, memberIds: string[]) {
  return {
    id: group.externalId,
    name: group.name,
    status: group.status,
    members: memberIds,
    connectedToChat: false,
    metadata: group.metadata,
  };
}
