/** The pure part of importing: the original's columns become this server's fields. */
import { describe, expect, it } from 'vitest';
import { groupOf, mentionedIds, messageOf, skipReason, userOf, withCustomerMentions, withMissingAsNull } from './dump-tables.js';

const APP = '873dca67-39f3-44e2-ab7d-9f85b2c752d5';
const CHEN = '1e3e4ead-20fa-4136-b29f-74d943e96f3b';

describe('dump rows', () => {
  it('turn mentions, also nested in todo items, back into the customer\'s user ids, and leave assignees as sent', () => {
    const content = [
      { type: 'p', children: [{ text: 'Hi ' }, { type: 'mention', user: { id: CHEN }, children: [{ text: '@Chen' }] }] },
      { type: 'todo', todoID: 't1', done: false, children: [{ type: 'p', children: [{ type: 'mention', user: { id: CHEN }, children: [{ text: '@Chen' }] }] }] },
      { type: 'assignee', user: { id: 'chen.wei' }, children: [{ text: '' }] },
    ];
    expect(mentionedIds(content)).toEqual([CHEN, CHEN]);
    expect(withCustomerMentions(content, new Map([[CHEN, 'chen.wei']]))).toEqual([
      { type: 'p', children: [{ text: 'Hi ' }, { type: 'mention', user: { id: 'chen.wei' }, children: [{ text: '@Chen' }] }] },
      { type: 'todo', todoID: 't1', done: false, children: [{ type: 'p', children: [{ type: 'mention', user: { id: 'chen.wei' }, children: [{ text: '@Chen' }] }] }] },
      { type: 'assignee', user: { id: 'chen.wei' }, children: [{ text: '' }] },
    ]);
  });

  it('rename the original\'s fields: screenName, state words, timestamp, empty class names', () => {
    const user = userOf(
      { externalID: 'amelia.hart', name: 'Amelia Hart', email: 'a@x.example', screenName: 'Amelia', profilePictureURL: null, state: 'deleted', metadata: '{"admin": true}', createdTimestamp: '2026-11-24 17:17:36.39536+00' },
      APP,
    );
    expect(user).toEqual({ applicationId: APP, id: 'amelia.hart', name: 'Amelia Hart', email: 'a@x.example', shortName: 'Amelia', profilePictureURL: null, status: 'deleted', metadata: { admin: true }, createdTimestamp: new Date('2026-11-24T17:17:36.395Z') });
    expect(groupOf({ externalID: 'ops-2019', name: 'Ops', state: 'inactive', metadata: '{}', createdTimestamp: '2026-11-24 17:17:36+00' }, APP).status).toBe('deleted');
    const message = messageOf(
      withMissingAsNull({ id: CHEN, externalID: 'm1', type: 'user_message', content: '[]', metadata: '{}', extraClassnames: '', skipLinkPreviews: 'f', timestamp: '2026-11-24 17:17:36.718+00' }),
      [],
      '7',
      'amelia.hart',
      new Map(),
    );
    expect(message).toMatchObject({ id: 'm1', threadRef: '7', authorID: 'amelia.hart', extraClassnames: null, url: null, iconURL: null, createdTimestamp: new Date('2026-11-24T17:17:36.718Z'), updatedTimestamp: null });
  });

  it('read a column an older dump does not have as NULL', () => {
    const row = withMissingAsNull({ id: 'x' });
    expect(row.id).toBe('x');
    expect(row.customEmailTemplate).toBeNull();
  });

  it('name why a table is skipped', () => {
    expect(skipReason('messages')).toBeNull();
    expect(skipReason('tasks')).toContain('tasks');
    expect(skipReason('slack_messages')).toContain('Slack');
    expect(skipReason('console_users')).toContain('console users');
    expect(skipReason('message_notifications')).toContain('e-mail records');
    expect(skipReason('something_new')).toBe('not held by this server');
  });
});
