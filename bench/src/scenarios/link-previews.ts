/**
 * Scenario 8, link previews: what making previews costs the message path, and how soon a preview
 * can be read. Message create through the gateway with plain text, then with a link in every
 * message (each to a page of its own, so that every message makes the worker fetch and parse a
 * page: the page cache never helps), served by a loopback page server with OpenGraph tags.
 */
import { messageBody, type Application } from '../api.js';
import { describeCpu, meanCpu, measure, median, rotate, seedConversations, withCpuShares, type CpuShares, type Harness, type Measured, type Scenario } from '../harness.js';
import type { HttpLoad } from '../load.js';
import { percentile } from '../load.js';
import { fmt, type Row, type Section } from '../report.js';
import { loopbackServer, until } from '@collab/shared/devkit';

/** Previews are made after the answer, off the request path: message create with links must keep 95 % of its throughput. */
const THROUGHPUT_TARGET = 0.95;
/** "Within seconds": the preview of a message can be read this soon after the create's answer (p50). */
const VISIBLE_TARGET_MS = 2000;
const ROUNDS = 3;
/** Message creates per second while the time until a preview is readable is measured. */
const LATENCY_RATE = 10;
const DRAIN_TIMEOUT_MS = 600_000;
const POLL_MS = 25;

/** A page server on loopback: every path answers an HTML page with OpenGraph tags. */
interface PageServer {
  origin: string;
  fetches: () => number;
  close(): Promise<void>;
}

async function startPageServer(): Promise<PageServer> {
  let fetches = 0;
  const server = await loopbackServer((request, response) => {
    fetches += 1;
    const path = request.url ?? '/';
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(
      `<!doctype html><html><head><title>Fallback ${path}</title>` +
        `<meta property="og:title" content="Page ${path}"><meta property="og:description" content="A page served for the benchmark.">` +
        `<meta property="og:image" content="/images${path}.png"></head><body><p>${'Some text. '.repeat(200)}</p></body></html>`,
    );
  });
  return { ...server, fetches: () => fetches };
}

async function count(harness: Harness, query: string, parameters: unknown[]): Promise<number> {
  return (await harness.system.sql.query<{ count: number }>(query, parameters)).rows[0].count;
}

/** Messages of the application with a link to the page server that have no preview yet. */
const WITHOUT_PREVIEW = `
  SELECT count(*)::int AS count FROM conversation.messages m
  WHERE m.application_id = $1 AND m.content::text LIKE '%' || $2 || '%'
    AND NOT EXISTS (SELECT 1 FROM conversation.message_link_previews p WHERE p.message_id = m.internal_id)`;

interface Drained {
  backlog: number;
  perSecond: number;
  seconds: number;
  cpu: CpuShares | null;
}

/** Entries the conversation worker's relay has not yet handed over (the events of the messages). */
const OUTBOX_BACKLOG = 'SELECT count(*)::int AS count FROM conversation.outbox';

/**
 * Waits until every message with a link has its preview and the event relay has caught up, so that
 * the next load does not pay for this one's work; how fast the previews were made.
 */
async function drained(harness: Harness, app: Application, origin: string, label: string): Promise<Drained> {
  const backlog = await count(harness, WITHOUT_PREVIEW, [app.id, origin]);
  const started = performance.now();
  const { cpu } = await withCpuShares(harness, () =>
    until(async () => (await count(harness, WITHOUT_PREVIEW, [app.id, origin])) === 0 && (await count(harness, OUTBOX_BACKLOG, [])) === 0, `the previews and events of ${label}`, DRAIN_TIMEOUT_MS, 100),
  );
  const seconds = (performance.now() - started) / 1000;
  harness.log(`${label}: previews of a backlog of ${backlog} messages made at ${(backlog / seconds).toFixed(0)}/s${cpu ? `; ${describeCpu(cpu)}` : ''}`);
  return { backlog, perSecond: backlog / seconds, seconds, cpu };
}

/** Message creates with a link at a modest, fixed rate; for each, how long after its answer its preview was stored. */
async function previewLatencies(harness: Harness, app: Application, author: string, threadPaths: () => string, link: () => string): Promise<number[]> {
  const answeredAt = new Map<string, number>();
  const visibleAt = new Map<string, number>();
  const total = LATENCY_RATE * harness.seconds;
  const started = performance.now();
  let sending = true;
  // Polls the previews of the messages answered so far; resolution POLL_MS.
  const poller = (async () => {
    while (sending || visibleAt.size < answeredAt.size) {
      const waiting = [...answeredAt.keys()].filter((id) => !visibleAt.has(id));
      if (waiting.length > 0) {
        const { rows } = await harness.system.sql.query<{ external_id: string }>(
          `SELECT m.external_id FROM conversation.messages m
           WHERE m.application_id = $1 AND m.external_id = ANY($2)
             AND EXISTS (SELECT 1 FROM conversation.message_link_previews p WHERE p.message_id = m.internal_id)`,
          [app.id, waiting],
        );
        const now = performance.now();
        for (const row of rows) visibleAt.set(row.external_id, now);
      }
      if (performance.now() - started > DRAIN_TIMEOUT_MS) throw new Error('previews of the paced message creates did not appear');
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  })();
  const creates: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    // Paced by the clock, not by the answers: a slow answer does not lower the rate.
    const wait = started + (i * 1000) / LATENCY_RATE - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    creates.push(
      app.api.ok('POST', threadPaths(), messageBody(author, `see ${link()}`)).then(({ body }) => {
        answeredAt.set(body.messageID, performance.now());
      }),
    );
  }
  await Promise.all(creates);
  sending = false;
  await poller;
  const latencies = [...answeredAt].map(([id, at]) => visibleAt.get(id)! - at).sort((a, b) => a - b);
  harness.log(`preview readable at ${LATENCY_RATE} creates/s: p50 ${fmt.ms(percentile(latencies, 50))}, p99 ${fmt.ms(percentile(latencies, 99))}`);
  return latencies;
}

interface Setting {
  label: string;
  rps: number;
  p50: number;
  rounds: number[];
  cpu: CpuShares | null;
}

function summarize(label: string, loads: Measured[]): Setting {
  return {
    label,
    rps: median(loads.map((measured) => measured.rps)),
    p50: median(loads.map((measured) => measured.p50)),
    rounds: loads.map((measured) => measured.rps),
    cpu: meanCpu(loads.map((measured) => ({ cpu: measured.cpu, seconds: measured.seconds }))),
  };
}

export const linkPreviews: Scenario = {
  key: 'link-previews',
  async run(harness: Harness): Promise<Section> {
    const { connections, system } = harness;
    const section: Section = {
      title: '8. Link previews',
      method:
        `Message create through the gateway at ${connections} connections, ${harness.seconds} s each after ${harness.warmupSeconds} s ` +
        `of warm-up (spread over 100 threads of one group): plain text (baseline), then a link in every message, each to a page ` +
        `of its own on a loopback page server (an HTML page of about 2 KB with OpenGraph tags), so that every message makes the ` +
        `conversation worker fetch and parse a page and the page cache never helps. Each with the conversation worker paused ` +
        `(SIGSTOP: the request path alone, as where workers have cores of their own; the target) and running (sharing this ` +
        `machine's two cores; reported). ${ROUNDS} rounds of the four in turn (each round starting one further); medians ` +
        `reported. After each load the harness waits until every message has its preview and the worker's event relay has ` +
        `caught up (timed), so that the next load does not pay for the backlog. Before the rounds: ${LATENCY_RATE} ` +
        `message creates with a link per second for ${harness.seconds} s, each from its answer until its preview is stored ` +
        `(polled every ${POLL_MS} ms, so readable through every read route).`,
      rows: [],
      notes: [],
    };
    if (!system.direct) {
      section.notes.push('Skipped: it needs the system the harness starts (whose worker may fetch pages from loopback).');
      return section;
    }
    const pages = await startPageServer();
    try {
      const seeded = await seedConversations(harness, 'bench link previews', 2, 100);
      const { app } = seeded;
      const [author] = seeded.userIds;
      const threadPaths = rotate(seeded.threadIds.map((id) => `/v1/threads/${id}/messages`));
      let pageNumber = 0;
      const link = () => `${pages.origin}/page-${++pageNumber}`;

      const latency = await withCpuShares(harness, () => previewLatencies(harness, app, author, threadPaths, link));

      const plain: Omit<HttpLoad, 'seconds'> = { baseUrl: system.url, method: 'POST', path: threadPaths, headers: app.api.headers, body: messageBody(author, 'hello'), connections };
      const withLinks: Omit<HttpLoad, 'seconds'> = { ...plain, body: undefined, bodyPerRequest: () => messageBody(author, `see ${link()} for the details`) };
      const worker = system.processes().find((p) => p.name === 'conversation-worker');
      if (!worker) throw new Error('the conversation worker of the started system is needed');
      const loads = new Map<string, Measured[]>();
      const drains: Drained[] = [];
      // Each round measures the four settings, starting one further each time so that a drift of the
      // machine's other load weighs on every setting alike.
      const settings = [
        { kind: 'plain', paused: true },
        { kind: 'links', paused: true },
        { kind: 'plain', paused: false },
        { kind: 'links', paused: false },
      ] as const;
      const key = (setting: (typeof settings)[number]) => `${setting.kind === 'plain' ? 'plain text' : 'with a link'}, worker ${setting.paused ? 'paused' : 'running'}`;
      for (let round = 0; round < ROUNDS; round++)
        for (const offset of settings.keys()) {
          const setting = settings[(offset + round) % settings.length];
          // Paused (SIGSTOP), the conversation worker neither relays events nor makes previews: the
          // load measures the request path alone, as on a deployment whose workers have their own cores.
          if (setting.paused) process.kill(worker.pid, 'SIGSTOP');
          try {
            const measured = await measure(harness, `message create, ${key(setting)} (round ${round + 1})`, setting.kind === 'plain' ? plain : withLinks);
            loads.set(key(setting), [...(loads.get(key(setting)) ?? []), measured]);
          } finally {
            if (setting.paused) process.kill(worker.pid, 'SIGCONT');
          }
          const drain = await drained(harness, app, pages.origin, `${key(setting)} (round ${round + 1})`);
          if (setting.kind === 'links') drains.push(drain);
        }
      const [pausedPlain, pausedLinks, runningPlain, runningLinks] = settings.map((setting) => summarize(key(setting), loads.get(key(setting))!));
      const visibleP50 = percentile(latency.result, 50);
      const throughput = (links: Setting, none: Setting, target: number | null): [Row, CpuShares | null][] => [
        [
          {
            figure: `message create ${links.label}: throughput`,
            value: fmt.rps(links.rps),
            baseline: `${fmt.rps(none.rps)} plain text`,
            ratio: fmt.ratio(links.rps / none.rps),
            target: target === null ? 'report' : `≥ ${fmt.ratio(target)}`,
            met: target === null ? null : links.rps / none.rps >= target,
          },
          links.cpu,
        ],
        [
          { figure: `message create ${links.label}: p50`, value: fmt.ms(links.p50), baseline: `${fmt.ms(none.p50)} plain text`, ratio: fmt.ratio(links.p50 / none.p50), target: '—', met: null },
          links.cpu,
        ],
      ];
      const measured: [Row, CpuShares | null][] = [
        ...throughput(pausedLinks, pausedPlain, THROUGHPUT_TARGET),
        ...throughput(runningLinks, runningPlain, null),
        [
          {
            figure: 'previews made after a load (worker backlog)',
            value: `${median(drains.map((drain) => drain.perSecond)).toFixed(0)}/s`,
            baseline: '—',
            ratio: '—',
            target: 'report',
            met: null,
          },
          meanCpu(drains),
        ],
        [
          {
            figure: `preview readable after the answer, ${LATENCY_RATE} creates/s: p50`,
            value: fmt.ms(visibleP50),
            baseline: '—',
            ratio: '—',
            target: `< ${fmt.ms(VISIBLE_TARGET_MS)}`,
            met: visibleP50 < VISIBLE_TARGET_MS,
          },
          latency.cpu,
        ],
        [
          { figure: `preview readable after the answer, ${LATENCY_RATE} creates/s: p99`, value: fmt.ms(percentile(latency.result, 99)), baseline: '—', ratio: '—', target: '—', met: null },
          latency.cpu,
        ],
      ];
      section.rows.push(...measured.map(([row]) => row));
      for (const [row, cpu] of measured)
        if (row.met === false && cpu) section.notes.push(`Missed: ${row.figure} (${row.value}); meanwhile ${describeCpu(cpu)}.`);
      section.notes.push(
        'Message create per round (' + settings.map(key).join(' / ') + '): ' +
          Array.from({ length: ROUNDS }, (_, round) => [pausedPlain, pausedLinks, runningPlain, runningLinks].map((setting) => setting.rounds[round].toFixed(0)).join(' / ')).join('; ') +
          ' req/s.',
        `With the worker running, it makes previews on the same two cores as the load, the services and PostgreSQL: the ` +
          `difference between the two "running" rows is the CPU the previews take from the machine, not time the request waits for.`,
        `Backlogs of messages without a preview when each load with links ended: ${drains.map((drain) => drain.backlog).join(', ')}; ` +
          `pages fetched in all: ${pages.fetches()}.`,
      );
      for (const setting of [pausedPlain, pausedLinks, runningPlain, runningLinks]) if (setting.cpu) section.notes.push(`message create, ${setting.label} (mean of the rounds): ${describeCpu(setting.cpu)}.`);
      const drainCpu = meanCpu(drains);
      if (drainCpu) section.notes.push(`making the backlog of previews (mean of the rounds): ${describeCpu(drainCpu)}.`);
    } finally {
      await pages.close();
    }
    return section;
  },
};
