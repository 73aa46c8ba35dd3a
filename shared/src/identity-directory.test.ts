import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ApplicationVersions } from './application-versions.js';
import { createLogger } from './logger.js';
import { reusingIdentityDirectory, type IdentityDirectory, type Lookup } from './identity-directory.js';
import { REUSED_ANSWER_MAX_AGE_MS } from './reused-answers.js';

/** identity's side: counts the questions, answers a group with `members` member ids. */
function countingIdentity(members = 0) {
  const asked: string[] = [];
  const inner: IdentityDirectory = {
    async lookup(applicationId, { userIds, groupId }) {
      asked.push(`${applicationId}:${groupId ?? ''}:${userIds.join(',')}`);
      const memberIds = Array.from({ length: members }, (_, i) => `member-${i}`);
      return { users: new Map(), group: groupId ? { id: groupId, memberIds } : null, isMember: () => false } as unknown as Lookup;
    },
  };
  return { inner, asked };
}

const versionsOf = (version: () => string) => ({ current: async () => version(), onConnectionLost: () => undefined }) as unknown as ApplicationVersions;
const logger = createLogger('test', 'silent');

afterEach(() => {
  vi.useRealTimers();
});

describe('reusing identity answers', () => {
  it('asks again when the version changed, the question differs or the application differs', async () => {
    const { inner, asked } = countingIdentity();
    let version = 'v1';
    const directory = reusingIdentityDirectory(inner, versionsOf(() => version), logger);
    await directory.lookup('app', { userIds: ['ann', 'bob'], groupId: 'team' }, 'r');
    await directory.lookup('app', { userIds: ['bob', 'ann', 'ann'], groupId: 'team' }, 'r');
    expect(asked).toHaveLength(1);
    await directory.lookup('app', { userIds: ['ann'], groupId: 'team' }, 'r');
    await directory.lookup('other-app', { userIds: ['ann', 'bob'], groupId: 'team' }, 'r');
    expect(asked).toHaveLength(3);
    version = 'v2';
    await directory.lookup('app', { userIds: ['ann', 'bob'], groupId: 'team' }, 'r');
    expect(asked).toHaveLength(4);
  });

  it('asks every time while the version cannot be read', async () => {
    const { inner, asked } = countingIdentity();
    const unreadable = { current: () => Promise.reject(new Error('redis away')), onConnectionLost: () => undefined } as unknown as ApplicationVersions;
    const directory = reusingIdentityDirectory(inner, unreadable, logger);
    for (let i = 0; i < 3; i++) await directory.lookup('app', { userIds: ['ann'] }, 'r');
    expect(asked).toHaveLength(3);
  });

  it('reuses an answer for at most its maximum age', async () => {
    vi.useFakeTimers({ now: 0 });
    const { inner, asked } = countingIdentity();
    const directory = reusingIdentityDirectory(inner, versionsOf(() => 'v1'), logger);
    await directory.lookup('app', { userIds: ['ann'] }, 'r');
    vi.setSystemTime(REUSED_ANSWER_MAX_AGE_MS - 1);
    await directory.lookup('app', { userIds: ['ann'] }, 'r');
    expect(asked).toHaveLength(1);
    vi.setSystemTime(REUSED_ANSWER_MAX_AGE_MS);
    await directory.lookup('app', { userIds: ['ann'] }, 'r');
    expect(asked).toHaveLength(2);
  });

  it('holds at most its weight in users and members, dropping the least recently used first', async () => {
    // Each answer weighs 1 + 9 members = 10; room for three.
    const { inner, asked } = countingIdentity(9);
    const directory = reusingIdentityDirectory(inner, versionsOf(() => 'v1'), logger, 30);
    for (const group of ['a', 'b', 'c']) await directory.lookup('app', { userIds: [], groupId: group }, 'r');
    await directory.lookup('app', { userIds: [], groupId: 'a' }, 'r');
    expect(asked).toHaveLength(3);
    await directory.lookup('app', { userIds: [], groupId: 'd' }, 'r');
    // b was the least recently used: dropped; a, c and d are reused.
    for (const group of ['a', 'c', 'd']) await directory.lookup('app', { userIds: [], groupId: group }, 'r');
    expect(asked).toHaveLength(4);
    await directory.lookup('app', { userIds: [], groupId: 'b' }, 'r');
    expect(asked).toHaveLength(5);
  });

  it('never files an answer heavier than its whole weight', async () => {
    const { inner, asked } = countingIdentity(100);
    const directory = reusingIdentityDirectory(inner, versionsOf(() => 'v1'), logger, 30);
    await directory.lookup('app', { userIds: [], groupId: 'big' }, 'r');
    await directory.lookup('app', { userIds: [], groupId: 'big' }, 'r');
    expect(asked).toHaveLength(2);
  });

  it('forgets everything when the connection is lost, and files no answer asked before', async () => {
    const { inner, asked } = countingIdentity();
    let lost = () => undefined as void;
    const versions = { current: async () => 'v1', onConnectionLost: (listener: () => void) => (lost = listener) } as unknown as ApplicationVersions;
    const directory = reusingIdentityDirectory(inner, versions, logger);
    await directory.lookup('app', { userIds: ['ann'] }, 'r');
    lost();
    // Asked, then the connection lost while identity answers: not filed.
    const slow = directory.lookup('app', { userIds: ['bob'] }, 'r');
    lost();
    await slow;
    await directory.lookup('app', { userIds: ['ann'] }, 'r');
    await directory.lookup('app', { userIds: ['bob'] }, 'r');
    expect(asked).toEqual(['app::ann', 'app::bob', 'app::ann', 'app::bob']);
  });
});
