/** The identity directory the conversation use cases ask (shared with the notification service). */
export { displayName, identityDirectory } from '@collab/shared';
export type { DirectoryUser, IdentityDirectory, Lookup, LookupResult } from '@collab/shared';
