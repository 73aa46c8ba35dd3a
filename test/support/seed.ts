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
