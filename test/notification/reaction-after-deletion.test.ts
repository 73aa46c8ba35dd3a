/**
 * A reaction whose outbox entry is relayed only after its user was permanently deleted: the
 * deletion removed the reaction and the notifications to or from that user, so the late relay
 * must not create a notification from the deleted user that nothing would remove.
 */
import { expect, it } from 'vitest';
import { newThread, putOk, settled, storedNotifications } from '../support/activity.js';
import { createApplication } from '../support/client.js';
import { startOutboxRelays } from '../support/outbox-relays.js';
import { seedTeam } from '../support/seed.js';
import { systemForFile, type TestSystem } from '../support/system.js';

let system: TestSystem;

// No relays until the test starts them, so that the deletion certainly comes first.
systemForFile((started) => (system = started), { outboxRelay: false });

it('creates no notification from a user deleted before their reaction was relayed', async () => {
  const app = await createApplication(system, 'late reaction');
  await seedTeam(app);
  const { threadId, messageId } = await newThread(app);
  await putOk(app, `/v1/threads/${threadId}/messages/${encodeURIComponent(messageId)}`, {
    addReactions: [{ reaction: '👍', userID: 'bob' }],
  });
  const deleted = await app.client.delete('/v1/users/bob', { permanently_delete: true });
  expect(deleted.status).toBe(200);

  const relays = await startOutboxRelays(system);
  try {
    await settled(system, app.id);
  } finally {
    await relays.stop();
  }
  expect((await storedNotifications(system, app.id)).filter((notification) => notification.sender === 'bob')).toEqual([]);
});
