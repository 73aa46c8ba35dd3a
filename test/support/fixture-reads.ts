/**
 * The 96 reads the original service answered after building the fixture dump's data
 * (shared/fixtures/cord-dump/dataset.jsonl, `expected_read`), replayed through this server's
 * gateway and compared field by field. This server answers some things differently on purpose; each
 * such difference is recognised by a rule that states it, and any other difference is reported as
 * unexplained.
 */
import { readFileSync } from 'node:fs';
import { request } from './client.js';
import { FIXTURE_CUSTOMER, FIXTURE_DIR } from './imports.js';
import { jsonDifferences, type JsonDifference } from './json-diff.js';
import { customerToken, serverToken } from './tokens.js';

export interface ExpectedRead {
  seq: number;
  app: 'app1' | 'app2' | null;
  auth: 'customer' | 'server';
  method: string;
  path: string;
  status: number;
  response: unknown;
}

/** The fixture's applications, with the secrets the dump holds. */
export const FIXTURE_APPS = {
  app1: { id: '873dca67-39f3-44e2-ab7d-9f85b2c752d5', secret: 'dc42128a0511ea8a4d22c9208eada1fc8fe1670906254748437022679ae635c4' },
  app2: { id: 'bf6a6ca3-7d66-4daa-8e75-db5739fef152', secret: 'f1b99d5628242406af82c4b3a0b32a59f607606dc2e2a3ac88f57bdd14a52ecc' },
} as const;

export function expectedReads(): ExpectedRead[] {
  return readFileSync(new URL('dataset.jsonl', FIXTURE_DIR), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.kind === 'expected_read');
}

export interface NamedDifference {
  seq: number;
  path: string;
  /** Where in the answer, or `status`. */
  at: string;
  expected: unknown;
  actual: unknown;
  /** The decision that explains it, or null when nothing does. */
  decision: string | null;
}

/** Lists whose order this server defines on its own (creation order, user lists by id). */
const ORDER_FREE = new Set(['members', 'groups', 'organizations', 'users', 'subscribers', 'seenBy', 'repliers', 'actionMessageRepliers', 'mentioned', 'participants']);
const sortKey = (item: unknown) => {
  const record = item as { id?: unknown; userID?: unknown } | null;
  return JSON.stringify(record?.id ?? record?.userID ?? item);
};
function withoutOrder(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) {
    const items = value.map((item) => withoutOrder(item));
    return ORDER_FREE.has(key) ? items.sort((a, b) => sortKey(a).localeCompare(sortKey(b))) : items;
  }
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutOrder(v, k)]));
  return value;
}

const last = (at: string) => at.slice(at.lastIndexOf('/') + 1);
const sameInstant = (a: unknown, b: unknown) =>
  typeof a === 'string' && typeof b === 'string' && /\d{4}-\d\d-\d\dT/.test(a) && Math.floor(Date.parse(a)) === Math.floor(Date.parse(b));

/** Each deliberate difference: which decision, and how to recognise it. */
const RULES: { decision: string; matches(read: ExpectedRead, d: JsonDifference): boolean }[] = [
  {
    decision: 'extraClassnames is null when never set (the reference answers "" for messages, nothing in thread lists)',
    matches: (_, d) => last(d.path) === 'extraClassnames' && (d.expected === '' || d.expected === '(absent)') && d.actual === null,
  },
  {
    decision: "a message's url is the thread's url when the message has none",
    matches: (read, d) =>
      last(d.path) === 'url' && (/\/messages/.test(read.path) || d.path.endsWith('/message/url')) && d.expected === null && typeof d.actual === 'string',
  },
  {
    decision: 'secrets never appear outside the create-application response',
    matches: (_, d) => last(d.path) === 'secret' && d.actual === '(absent)',
  },
  {
    decision: 'timestamps are ISO-8601 UTC with milliseconds and Z',
    matches: (_, d) => sameInstant(d.expected, d.actual),
  },
  {
    decision: 'output supersets (keys this server adds)',
    matches: (read, d) =>
      d.expected === '(absent)' &&
      (['connectedToChat', 'groupIDsWithLinkedChatProfile', 'createdTimestamp', 'displayName'].includes(last(d.path)) ||
        // The thread list shows each thread as GET /v1/threads/<ID> does.
        (read.path === '/v1/threads' && last(d.path) === 'extraClassnames')),
  },
  {
    decision: 'eventWebhookSubscriptions is returned by the application GETs',
    matches: (_, d) => last(d.path) === 'eventWebhookSubscriptions' && d.expected === '(absent)',
  },
  {
    decision: "notification items carry `text`, the template with names substituted",
    matches: (read, d) => /\/notifications$/.test(read.path) && last(d.path) === 'text' && d.expected === '(absent)',
  },
];

/**
 * Replays every expected read against `baseUrl` (server tokens minted from the fixture's
 * application secrets, the customer token from its customer secret) and answers every difference,
 * each with the decision that explains it or null.
 */
export async function replayExpectedReads(baseUrl: string): Promise<NamedDifference[]> {
  const differences: NamedDifference[] = [];
  for (const read of expectedReads()) {
    const token =
      read.auth === 'customer'
        ? await customerToken(FIXTURE_CUSTOMER.id, FIXTURE_CUSTOMER.secret)
        : await serverToken(FIXTURE_APPS[read.app!].id, FIXTURE_APPS[read.app!].secret);
    const response = await request(baseUrl, read.method, read.path, { token });
    const base = { seq: read.seq, path: read.path };
    if (response.status !== read.status) differences.push({ ...base, at: 'status', expected: read.status, actual: response.status, decision: null });
    let expected = read.response as Record<string, unknown>;
    let actual = response.body as Record<string, unknown>;
    // GET /v1/threads answers an array (the reference wraps it in {threads, pagination}).
    if (read.path === '/v1/threads' && Array.isArray(actual) && Array.isArray(expected?.threads)) expected = expected.threads as never;
    // GET /v1/users/<ID>/notifications answers {notifications, pagination} (the reference a bare array).
    if (/\/notifications$/.test(read.path) && Array.isArray(expected) && Array.isArray(actual?.notifications)) actual = actual.notifications as never;
    const listKey = /^\/v1\/(groups|organizations|users)$/.test(read.path) ? 'groups' : '';
    for (const difference of jsonDifferences(withoutOrder(expected, listKey), withoutOrder(actual, listKey))) {
      const rule = RULES.find((candidate) => candidate.matches(read, difference));
      differences.push({ ...base, at: difference.path, expected: difference.expected, actual: difference.actual, decision: rule?.decision ?? null });
    }
  }
  return differences;
}
