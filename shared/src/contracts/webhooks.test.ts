import { describe, expect, it } from 'vitest';
import type { ApplicationVersions, VersionedSubject } from '../application-versions.js';
import { createLogger } from '../logger.js';
import { reusingWebhookTargets, type WebhookTargets } from './webhooks.js';

describe('reusing webhook targets', () => {
  it("reuses the answer per application and event type while the application's webhook-targets version holds", async () => {
    const asked: string[] = [];
    const inner: WebhookTargets = {
      async has(applicationId, type) {
        asked.push(`${applicationId}:${type}`);
        return true;
      },
    };
    const current: Record<VersionedSubject, string> = { directory: 'd1', 'webhook-targets': 't1' };
    const versions = { current: async (subject: VersionedSubject) => current[subject], onConnectionLost: () => undefined } as unknown as ApplicationVersions;
    const targets = reusingWebhookTargets(inner, versions, createLogger('test', 'silent'));
    for (let i = 0; i < 2; i++) await targets.has('app', 'thread-message-added', 'r');
    expect(asked).toEqual(['app:thread-message-added']);
    await targets.has('app', 'notification-created', 'r');
    await targets.has('other-app', 'thread-message-added', 'r');
    expect(asked).toHaveLength(3);
    // Another subject's version says nothing of the targets.
    current.directory = 'd2';
    await targets.has('app', 'thread-message-added', 'r');
    expect(asked).toHaveLength(3);
    current['webhook-targets'] = 't2';
    await targets.has('app', 'thread-message-added', 'r');
    expect(asked).toHaveLength(4);
  });
});
