/**
 * Client tokens (decision 53): the gateway verifies the token's signature, then asks identity for
 * the viewer it names (applying `user_details`/`group_details` first, original-extras §4.2), and
 * forwards the viewer to the owning service in an internal header.
 */
import { s } from '../schema/index.js';

export const clientSessionContract = {
  method: 'POST',
  path: '/internal/client-session',
  request: s.object({
    userId: s.string({ minLength: 1 }),
    groupId: s.string({ minLength: 1 }).nullable(),
    userDetails: s.unknown().optional(),
    groupDetails: s.unknown().optional(),
  }),
  /** The viewer: the token's group (or null), and the external ids of the groups it may read. */
  response: s.object({
    userId: s.string(),
    groupId: s.string().nullable(),
    groupIds: s.array(s.string()),
  }),
} as const;

export type Viewer = ReturnType<typeof clientSessionContract.response.parse>;

/** The viewer as the internal header carries it. */
export function encodeViewer(viewer: Viewer): string {
  return Buffer.from(JSON.stringify(viewer)).toString('base64url');
}

/** The viewer of the internal header; absent or malformed (never sent so by the gateway) is none. */
export function decodeViewer(header: string | undefined): Viewer | undefined {
  if (!header) return undefined;
  try {
    return clientSessionContract.response.parse(JSON.parse(Buffer.from(header, 'base64url').toString('utf8')));
  } catch {
    return undefined;
  }
}
