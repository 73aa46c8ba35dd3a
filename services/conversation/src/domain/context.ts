import type { ApplicationVersions, Logger } from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { IdentityDirectory } from './identity-directory.js';
import type { AppendBatches } from './messages/append-batches.js';
import type { LinkPreviewQueue } from './link-previews/link-previews.js';

/** What the conversation use cases need. */
export interface ConversationContext {
  db: DataSource;
  logger: Logger;
  /** Versions of what other services answered, read over this process's Redis (directory, webhook targets). */
  versions: ApplicationVersions;
  identity: IdentityDirectory;
  files: { urlSecret: string; maxBytes: number; publicUrl: string };
  linkPreviews: LinkPreviewQueue;
  /** Concurrent appends to one message, written together (this process's). */
  appends: AppendBatches<boolean>;
}
