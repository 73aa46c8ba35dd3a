import type { ApplicationVersions, ConversationDirectory, IdentityDirectory } from '@collab/shared';
import type { DataSource } from 'typeorm';

/** What the notification use cases need, wired once per process (service.ts). */
export interface NotificationContext {
  db: DataSource;
  /** Versions of what other services answered, read over this process's Redis (directory, webhook targets). */
  versions: ApplicationVersions;
  identity: IdentityDirectory;
  /** Where the messages and threads of activity notifications are asked. */
  conversation: ConversationDirectory;
}
