/**
 * Cache invalidation across processes: identity publishes when an application's credentials or
 * an access-token session change, and every gateway replica drops its cached copy.
 */
export function invalidationChannel(prefix: string): string {
  return `${prefix}:identity:invalidate`;
}

export type InvalidationMessage =
  | { kind: 'application'; id: string }
  | { kind: 'customer'; id: string }
  | { kind: 'session'; id: string }
  | { kind: 'sessions-of-application'; id: string };
