/** Test data created through the API, as a customer's backend would sync it. */
import type { TestApplication } from './client.js';

/** PUTs each `[id, body]` to `<collection>/<id>` as the application; any failure stops the setup. */
export async function putEach(
  app: TestApplication,
  collection: '/v1/users' | '/v1/groups',
  items: readonly (readonly [string, unknown])[],
): Promise<void> {
  for (const [id, body] of items) {
    const response = await app.client.put(`${collection}/${encodeURIComponent(id)}`, body);
    if (response.status !== 200) throw new Error(`PUT ${collection}/${id} failed: ${JSON.stringify(response.body)}`);
  }
}

/** ann and bob are active members of `team`; carl exists outside it (in `outside`); dora is a deleted member. */
export async function seedTeam(app: TestApplication): Promise<void> {
  await putEach(app, '/v1/users', [
    ['ann', { name: 'Ann' }],
    ['bob', { name: 'Bob' }],
    ['carl', { name: 'Carl' }],
    ['dora', { name: 'Dora', status: 'deleted' }],
  ]);
  await putEach(app, '/v1/groups', [
    ['team', { name: 'team', members: ['ann', 'bob', 'dora'] }],
    ['outside', { name: 'outside', members: ['carl'] }],
  ]);
}

/**
 * A thread of `messages` messages by ann (who must exist) in a new group `groupId` of which she is
 * the member: the first message through the API, the others inserted in bulk as the rows message
 * creation writes (ids `<threadId>-<n>`), so that a test has thousands without thousands of
 * requests.
 */
export async function seedThread(app: TestApplication, groupId: string, threadId: string, messages: number): Promise<void> {
  await putEach(app, '/v1/groups', [[groupId, { name: groupId, members: ['ann'] }]]);
  const created = await app.client.post(`/v1/threads/${encodeURIComponent(threadId)}/messages`, {
    authorID: 'ann',
    content: [{ type: 'p', children: [{ text: 'first' }] }],
    createThread: { groupID: groupId, location: { page: threadId }, url: 'https://example.com', name: threadId },
  });
  if (created.status !== 200) throw new Error(`creating thread ${threadId} failed: ${JSON.stringify(created.body)}`);
  await app.client.system.sql.query(
    `INSERT INTO conversation.messages (application_id, external_id, thread_id, author_id, content, created_at)
     SELECT $1, $2 || '-' || n, t.internal_id, 'ann', '[]', now()
     FROM conversation.threads t, generate_series(1, $3) n WHERE t.application_id = $1 AND t.external_id = $2`,
    [app.id, threadId, messages - 1],
  );
}
