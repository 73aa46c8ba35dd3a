/**
 * A reaction whose outbox entry is relayed only after its user was permanently deleted: the
 * deletion removed the reaction and the notifications to or from that user, so the late relay
 * must not create a notification from the deleted user that nothing would remove.
 */
import { createLogger, workerVars } from '@collab/shared';
import type { OutboxRelay } from '@collab/shared/storage';
import type { DataSource } from 'typeorm';
import { expect, it } from 'vitest';
import { loadConversationWorkerConfig } from '../../services/conversation/src/config.js';
import { createConversationDataSource } from '../../services/conversation/src/data-source.js';
import { conversationContext, conversationEvents } from '../../services/conversation/src/service.js';
import { loadNotificationWorkerConfig } from '../../services/notification/src/config.js';
import { createNotificationDataSource } from '../../services/notification/src/data-source.js';
import { notificationContext, notificationEvents } from '../../services/notification/src/service.js';
import { newThread, putOk, settled, storedNotifications } from '../support/activity.js';
import { createApplication } from '../support/client.js';
import { seedTeam } from '../support/seed.js';
import { systemForFile, type TestSystem } from '../support/system.js';

let system: TestSystem;
const databases: DataSource[] = [];

// No relays until the test starts them, so that the deletion certainly comes first.
systemForFile((started) => (system = started), {
  outboxRelay: false,
  beforeStop: async () => {
    for (const db of databases) await db.destroy();
  },
});

async function startRelays(): Promise<OutboxRelay[]> {
  const logger = createLogger('test', 'silent');
  const conversationConfig = loadConversationWorkerConfig(system.env);
  const notificationConfig = loadNotificationWorkerConfig(system.env);
  const conversationDb = createConversationDataSource(system.env.DATABASE_URL, 2);
  const notificationDb = createNotificationDataSource(system.env.DATABASE_URL, 2);
  for (const db of [conversationDb, notificationDb]) {
    await db.initialize();
    databases.push(db);
  }
  return [
    conversationEvents(conversationContext(conversationDb, conversationConfig, logger), conversationConfig, logger),
    notificationEvents(notificationContext(notificationDb, notificationConfig), notificationConfig, logger),
  ].map((outbox) => outbox.startRelay({ pollMs: workerVars.OUTBOX_POLL_MS.default! }));
}

it('creates no notification from a user deleted before their reaction was relayed', async () => {
  const app = await createApplication(system, 'late reaction');
  await seedTeam(app);
  const { threadId, messageId } = await newThread(app);
  await putOk(app, `/v1/threads/${threadId}/messages/${encodeURIComponent(messageId)}`, {
    addReactions: [{ reaction: '👍', userID: 'bob' }],
  });
  const deleted = await app.client.delete('/v1/users/bob', { permanently_delete: true });
  expect(deleted.status).toBe(200);

  const relays = await startRelays();
  try {
    await settled(system, app.id);
  } finally {
    await Promise.all(relays.map((relay) => relay.stop()));
  }
  expect((await storedNotifications(system, app.id)).filter((notification) => notification.sender === 'bob')).toEqual([]);
});
