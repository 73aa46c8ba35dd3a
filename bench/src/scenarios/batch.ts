/**
 * Scenario 3, batch: 10,000 users and 100 groups of 100 members in one `POST /v1/batch`, timed
 * until the batch is applied (the answer, or the job's completion when it answers 202), against
 * the same rows written by multi-row `INSERT … ON CONFLICT` statements in one transaction. Each
 * run writes into a new application, so both sides create every row.
 */
import { createApplication, type Api } from '../api.js';
import type { Harness, Scenario } from '../harness.js';
import { fmt, type Section } from '../report.js';

const USERS = 10_000;
const GROUPS = 100;
const MEMBERS = 100;
const RUNS = 3;
const RATIO_TARGET = 3;
const SECONDS_TARGET = 5;
const JOB_TIMEOUT_MS = 120_000;

const users = Array.from({ length: USERS }, (_, i) => ({ id: `user-${i}`, name: `User ${i}`, email: `user-${i}@example.com` }));
const groups = Array.from({ length: GROUPS }, (_, g) => ({
  id: `group-${g}`,
  name: `Group ${g}`,
  members: users.slice(g * MEMBERS, (g + 1) * MEMBERS).map((user) => user.id),
}));

async function viaApi(api: Api): Promise<void> {
  const answer = await api.ok('POST', '/v1/batch', { users, groups });
  if (answer.status !== 202) return;
  const deadline = Date.now() + JOB_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const { body } = await api.ok('GET', `/v1/batch/${answer.body.jobID}`);
    if (body.status === 'completed') return;
    if (body.status === 'failed') throw new Error(`the batch failed: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the batch did not complete in time');
}

async function viaSql(harness: Harness, applicationId: string): Promise<void> {
  const client = await harness.system.sql.connect();
  try {
    await client.query('BEGIN');
    const values: unknown[] = [applicationId];
    const tuples = users.map((user) => {
      values.push(user.id, user.name, user.email);
      return `($1, $${values.length - 2}, $${values.length - 1}, $${values.length})`;
    });
    await client.query(
      `INSERT INTO identity.users (application_id, external_id, name, email) VALUES ${tuples.join(', ')}
       ON CONFLICT (application_id, external_id) DO UPDATE SET name = EXCLUDED.name, email = EXCLUDED.email`,
      values,
    );
    const groupValues: unknown[] = [applicationId];
    const groupTuples = groups.map((group) => {
      groupValues.push(group.id, group.name);
      return `($1, $${groupValues.length - 1}, $${groupValues.length})`;
    });
    await client.query(
      `INSERT INTO identity.groups (application_id, external_id, name) VALUES ${groupTuples.join(', ')}
       ON CONFLICT (application_id, external_id) DO UPDATE SET name = EXCLUDED.name`,
      groupValues,
    );
    await client.query(
      `INSERT INTO identity.group_members (application_id, group_id, user_id)
       SELECT $1, g.internal_id, u.internal_id FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS d(group_id, user_id, position)
       JOIN identity.groups g ON g.application_id = $1 AND g.external_id = d.group_id
       JOIN identity.users u ON u.application_id = $1 AND u.external_id = d.user_id
       ORDER BY d.position ON CONFLICT (group_id, user_id) DO NOTHING`,
      [applicationId, groups.flatMap((group) => group.members.map(() => group.id)), groups.flatMap((group) => group.members)],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

async function timed(work: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await work();
  return (performance.now() - start) / 1000;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export const batch: Scenario = {
  key: 'batch',
  async run(harness: Harness): Promise<Section> {
    const { system } = harness;
    const api: number[] = [];
    const raw: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const forApi = await createApplication(system.url, system.customer, `bench batch ${run}`);
      const forSql = await createApplication(system.url, system.customer, `bench batch sql ${run}`);
      api.push(await timed(() => viaApi(forApi.api)));
      raw.push(await timed(() => viaSql(harness, forSql.id)));
      harness.log(`batch run ${run + 1}: ${fmt.s(api[run])} via the API, ${fmt.s(raw[run])} raw SQL`);
    }
    const [apiSeconds, rawSeconds] = [median(api), median(raw)];
    const ratio = apiSeconds / rawSeconds;
    return {
      title: '3. Batch',
      method:
        `One \`POST /v1/batch\` of ${USERS.toLocaleString('en')} users and ${GROUPS} groups of ${MEMBERS} members, timed until applied ` +
        `(the answer, or the completion of its job when it answers 202). Baseline: the same rows through multi-row ` +
        `\`INSERT … ON CONFLICT\` statements (users, groups, memberships) in one transaction. Each run writes into a new ` +
        `application; the median of ${RUNS} runs.`,
      rows: [
        {
          figure: 'seconds to completion',
          value: fmt.s(apiSeconds),
          baseline: `${fmt.s(rawSeconds)} SQL script`,
          ratio: fmt.ratio(ratio),
          target: `≤ ${fmt.ratio(RATIO_TARGET)} and < ${SECONDS_TARGET} s`,
          met: ratio <= RATIO_TARGET && apiSeconds < SECONDS_TARGET,
        },
      ],
      notes: [`Runs: API ${api.map(fmt.s).join(', ')}; SQL script ${raw.map(fmt.s).join(', ')}.`],
    };
  },
};
