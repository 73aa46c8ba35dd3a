import { describe, expect, it } from 'vitest';
import { request, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('test app', (started) => ({ system, app } = started));

describe('the system', () => {
  it('answers health and readiness through the gateway', async () => {
    expect((await request(system.url, 'GET', '/healthz')).status).toBe(200);
    const ready = await request(system.url, 'GET', '/readyz');
    expect(ready.status).toBe(200);
  });

  it('creates a user and reads it back', async () => {
    const created = await app.client.put('/v1/users/alice', { name: 'Alice', email: 'alice@example.com' });
    expect(created.body).toEqual({ success: true, message: 'You successfully created user alice' });
    const read = await app.client.get('/v1/users/alice');
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: 'alice', name: 'Alice', email: 'alice@example.com', groups: [] });
  });
});
