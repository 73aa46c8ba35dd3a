/**
 * Scenario 7, webhooks: what events cost the message path, and how fast they reach a receiver.
 * Message create through the gateway (as in section 1) for one application without a webhook,
 * then with one to a loopback receiver answering 200, then with one to a closed loopback port; how
 * many deliveries per second one webhooks worker sends; and how long after a message create's
 * answer its event arrives.
 */
import { randomUUID } from 'node:crypto';
import { createInternalClient, recordWebhookEvents, type WebhookEventInput } from '@collab/shared';
import { messageBody, type Application } from '../api.js';
import { describeCpu, meanCpu, measure, median, outboxBacklog, rotate, seedConversations, withCpuShares, type CpuShares, type Harness, type Measured, type Scenario } from '../harness.js';
import { httpLoad, percentile, type HttpLoad } from '../load.js';
import { fmt, type Row, type Section } from '../report.js';
import { freePort, loopbackServer, until } from '@collab/shared/devkit';

/** Events must cost the message path at most 10 % of its throughput, whether the receiver is up or down. */
const THROUGHPUT_TARGET = 0.9;
const DELIVERY_RATE_TARGET = 500;
const LATENCY_TARGET_MS = 200;
/** Events recorded for the worker's figure, in calls of RECORD_BATCH (the endpoint takes up to 1000), RECORD_CALLS at once. */
const WORKER_EVENTS = 10_000;
const RECORD_BATCH = 500;
const RECORD_CALLS = 4;
/** Rounds of the three message-create loads (medians reported): the machine's other load varies. */
const ROUNDS = 3;
/** Message creates per second while the event latency is measured: well below what the relay sustains. */
const LATENCY_RATE = 10;
/** The backlog a 50-connection load leaves takes a while to relay; the run's own deadline bounds it anyway. */
const DRAIN_TIMEOUT_MS = 600_000;

/** A receiver on loopback answering 200 to every event, noting when each arrived (performance.now()). */
interface Receiver {
  url: string;
  /** First arrival of each event, by X-Cord-Event-ID (delivery is at least once). */
  arrivals: Map<string, number>;
  /** First arrival of the event of each message, by its messageID. */
  messages: Map<string, number>;
  /** The payload of a thread-message-added event as its producer built it, once one arrived. */
  sample: Record<string, unknown> | null;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const server = await loopbackServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = performance.now();
      const eventId = String(request.headers['x-cord-event-id']);
      if (!receiver.arrivals.has(eventId)) receiver.arrivals.set(eventId, at);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; messageID?: string; event: Record<string, unknown> };
      if (body.type === 'thread-message-added' && body.messageID) {
        if (!receiver.messages.has(body.messageID)) receiver.messages.set(body.messageID, at);
        receiver.sample ??= body.event;
      }
      response.writeHead(200).end();
    });
  });
  const receiver: Receiver = { url: `${server.origin}/events`, arrivals: new Map(), messages: new Map(), sample: null, close: server.close };
  return receiver;
}

async function registerWebhook(app: Application, url: string): Promise<string> {
  const { body } = await app.api.ok('POST', `/v1/applications/${app.id}/webhooks`, { url, events: ['thread-message-added'] });
  return body.webhookID;
}

async function deleteWebhook(app: Application, webhookId: string): Promise<void> {
  await app.api.ok('DELETE', `/v1/applications/${app.id}/webhooks/${webhookId}`);
}

async function count(harness: Harness, query: string, parameters: unknown[] = []): Promise<number> {
  return (await harness.system.sql.query<{ count: number }>(query, parameters)).rows[0].count;
}

interface Relayed {
  /** Entries waiting when the wait began. */
  backlog: number;
  perSecond: number;
  seconds: number;
  cpu: CpuShares | null;
}

/**
 * Waits until the relay has handed over everything recorded so far, so that the next measurement
 * does not pay for the previous one's events; returns how fast it went.
 */
async function relayed(harness: Harness, label: string): Promise<Relayed> {
  const backlog = await outboxBacklog(harness);
  const started = performance.now();
  const { cpu } = await withCpuShares(harness, () => until(async () => (await outboxBacklog(harness)) === 0, `the conversation outbox to drain (${label})`, DRAIN_TIMEOUT_MS, 100));
  const seconds = (performance.now() - started) / 1000;
  const perSecond = backlog / seconds;
  harness.log(`${label}: relayed a backlog of ${backlog} events at ${perSecond.toFixed(0)}/s${cpu ? `; ${describeCpu(cpu)}` : ''}`);
  return { backlog, perSecond, seconds, cpu };
}

/** Until the worker has sent every delivery of the application to `url`. */
async function untilDelivered(harness: Harness, app: Application, url: string): Promise<void> {
  const pending = `SELECT count(*)::int AS count FROM webhooks.deliveries WHERE application_id = $1 AND url = $2 AND status = 'pending'`;
  await until(async () => (await count(harness, pending, [app.id, url])) === 0, `every delivery to ${url}`, DRAIN_TIMEOUT_MS, 100);
}

/** Message creates at a fixed, modest rate; for each, how long after its answer the receiver got its event. */
async function eventLatencies(harness: Harness, app: Application, author: string, threadPaths: () => string, receiver: Receiver): Promise<number[]> {
  const answeredAt = new Map<string, number>();
  const total = LATENCY_RATE * harness.seconds;
  const started = performance.now();
  const creates: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    // Paced by the clock, not by the answers: a slow answer does not lower the rate.
    const wait = started + (i * 1000) / LATENCY_RATE - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    creates.push(
      app.api.ok('POST', threadPaths(), messageBody(author, `latency ${i}`)).then(({ body }) => {
        answeredAt.set(body.messageID, performance.now());
      }),
    );
  }
  await Promise.all(creates);
  await until(async () => [...answeredAt.keys()].every((id) => receiver.messages.has(id)), 'the events of the paced message creates', DRAIN_TIMEOUT_MS, 100);
  const latencies = [...answeredAt].map(([id, at]) => receiver.messages.get(id)! - at).sort((a, b) => a - b);
  harness.log(`event latency at ${LATENCY_RATE} creates/s: p50 ${fmt.ms(percentile(latencies, 50))}, p99 ${fmt.ms(percentile(latencies, 99))}`);
  return latencies;
}

/**
 * Deliveries per second of the one webhooks worker: it is paused (SIGSTOP) while the events are
 * recorded and queued, so that the figure is its own rate and not the recording's, then resumed
 * and timed until the receiver got every event.
 */
async function workerRate(harness: Harness, app: Application, receiver: Receiver): Promise<{ perSecond: number; cpu: CpuShares | null }> {
  const { direct, webhooks } = harness.system;
  const worker = harness.system.processes().find((p) => p.name === 'webhooks-worker');
  if (!direct || !webhooks || !worker) throw new Error('the webhooks worker and service of the started system are needed');
  if (!receiver.sample) throw new Error('no thread-message-added event reached the receiver to take as the sample');
  const payload = receiver.sample;
  const client = createInternalClient({ baseUrl: webhooks, internalToken: direct.internalToken, service: 'webhooks', timeoutMs: 120_000 });
  const batches: WebhookEventInput[][] = [];
  for (let i = 0; i < WORKER_EVENTS; i += RECORD_BATCH)
    batches.push(Array.from({ length: Math.min(RECORD_BATCH, WORKER_EVENTS - i) }, () => ({ id: randomUUID(), type: 'thread-message-added' as const, payload })));
  const ids = batches.flat().map((event) => event.id);

  process.kill(worker.pid, 'SIGSTOP');
  let resumedAt: number;
  try {
    const recordStarted = performance.now();
    const waiting = [...batches];
    await Promise.all(
      Array.from({ length: RECORD_CALLS }, async () => {
        for (let batch = waiting.shift(); batch; batch = waiting.shift()) {
          const deliveries = await recordWebhookEvents(client, app.id, batch, `bench-${randomUUID()}`);
          if (deliveries !== batch.length) throw new Error(`recorded ${deliveries} deliveries for ${batch.length} events`);
        }
      }),
    );
    harness.log(`recorded ${WORKER_EVENTS} events in ${fmt.s((performance.now() - recordStarted) / 1000)} (worker paused)`);
  } finally {
    resumedAt = performance.now();
    process.kill(worker.pid, 'SIGCONT');
  }
  const { cpu } = await withCpuShares(harness, () =>
    until(async () => ids.every((id) => receiver.arrivals.has(id)), `the receiver to get ${WORKER_EVENTS} events`, DRAIN_TIMEOUT_MS, 100),
  );
  const lastArrival = Math.max(...ids.map((id) => receiver.arrivals.get(id)!));
  const perSecond = WORKER_EVENTS / ((lastArrival - resumedAt) / 1000);
  harness.log(`one webhooks worker: ${perSecond.toFixed(0)} deliveries/s${cpu ? `; ${describeCpu(cpu)}` : ''}`);
  return { perSecond, cpu };
}

/** One setting's figures over the rounds: medians, each round's values, and where the CPU went on average. */
interface Setting {
  label: string;
  rps: number;
  p50: number;
  rounds: number[];
  backlogs: number[];
  cpu: CpuShares | null;
  relayPerSecond: number;
  relayCpu: CpuShares | null;
}

/**
 * Message create at the run's concurrency without a webhook, with one to the receiver and with one
 * to a closed port: after one load not counted, ROUNDS rounds of the three.
 */
async function messageCreateRounds(harness: Harness, app: Application, load: Omit<HttpLoad, 'seconds'>, receiver: Receiver): Promise<Setting[]> {
  const settings = [
    { label: 'no webhook', url: null },
    { label: 'receiver up', url: receiver.url },
    { label: 'receiver down', url: `http://127.0.0.1:${await freePort()}/events` },
  ];
  const runs = settings.map(() => ({ loads: [] as Measured[], relays: [] as Relayed[] }));
  // The first loads of a fresh system run slower (JIT, pools, caches).
  await httpLoad({ ...load, seconds: harness.seconds });
  await relayed(harness, 'warm-up');
  // In turn, each round starting one further, so that a drift of the machine's other load (or of
  // the system itself) weighs on every setting alike.
  for (let round = 0; round < ROUNDS; round++)
    for (const offset of settings.keys()) {
      const index = (offset + round) % settings.length;
      const { label, url } = settings[index];
      const webhookId = url ? await registerWebhook(app, url) : null;
      runs[index].loads.push(await measure(harness, `message create, ${label} (round ${round + 1})`, load));
      // Relayed while the webhook is still registered: the backlog's events cost what the load's would.
      runs[index].relays.push(await relayed(harness, `${label} (round ${round + 1})`));
      if (url === receiver.url) await untilDelivered(harness, app, url);
      if (webhookId) await deleteWebhook(app, webhookId);
    }
  return settings.map(({ label }, index) => {
    const { loads, relays } = runs[index];
    return {
      label,
      rps: median(loads.map((measured) => measured.rps)),
      p50: median(loads.map((measured) => measured.p50)),
      rounds: loads.map((measured) => measured.rps),
      backlogs: relays.map((relay) => relay.backlog),
      cpu: meanCpu(loads.map((measured) => ({ cpu: measured.cpu, seconds: measured.seconds }))),
      relayPerSecond: median(relays.map((relay) => relay.perSecond)),
      relayCpu: meanCpu(relays),
    };
  });
}

function throughputRows(setting: Setting, none: Setting): Row[] {
  const ratio = setting.rps / none.rps;
  return [
    {
      figure: `message create, ${setting.label}: throughput`,
      value: fmt.rps(setting.rps),
      baseline: `${fmt.rps(none.rps)} no webhook`,
      ratio: fmt.ratio(ratio),
      target: `≥ ${fmt.ratio(THROUGHPUT_TARGET)}`,
      met: ratio >= THROUGHPUT_TARGET,
    },
    {
      figure: `message create, ${setting.label}: p50`,
      value: fmt.ms(setting.p50),
      baseline: `${fmt.ms(none.p50)} no webhook`,
      ratio: fmt.ratio(setting.p50 / none.p50),
      target: '—',
      met: null,
    },
  ];
}

export const webhooks: Scenario = {
  key: 'webhooks',
  async run(harness: Harness): Promise<Section> {
    const { connections, system } = harness;
    const section: Section = {
      title: '7. Webhooks',
      method:
        `Message create through the gateway at ${connections} connections, ${harness.seconds} s each after ${harness.warmupSeconds} s of ` +
        `warm-up (spread over 100 threads of one group, as in section 1), for one application: without any webhook (baseline), ` +
        `with a webhook for \`thread-message-added\` to a receiver on loopback answering 200, and with one to a closed loopback ` +
        `port instead. After one load not counted, ${ROUNDS} rounds of the three in turn (each round starting with the next ` +
        `setting); medians reported. After each load the conversation worker's relay hands over the backlog the load left ` +
        `(timed), so that the next load does not pay for it; the failed deliveries of the receiver-down loads are retried ` +
        `meanwhile, as they would be. Before the rounds: the event latency, ${LATENCY_RATE} message creates per second for ` +
        `${harness.seconds} s, from each answer until the receiver got its event; and one webhooks worker's rate, ` +
        `${WORKER_EVENTS.toLocaleString('en')} events (the payload of a real one) recorded through the webhooks service's ` +
        `internal endpoint while the worker is paused (SIGSTOP), timed from its resumption until the receiver got them all. ` +
        `The receiver runs in the harness's process.`,
      rows: [],
      notes: [],
    };
    if (!system.webhooks || !system.direct) {
      section.notes.push('Skipped: it needs the system the harness starts (whose processes may post to loopback receivers) and its webhooks worker.');
      return section;
    }
    const receiver = await startReceiver();
    try {
      const seeded = await seedConversations(harness, 'bench webhooks', 2, 100);
      const { app } = seeded;
      const [author] = seeded.userIds;
      const threadPaths = rotate(seeded.threadIds.map((id) => `/v1/threads/${id}/messages`));
      await relayed(harness, 'seeding');

      const webhookId = await registerWebhook(app, receiver.url);
      const latency = await withCpuShares(harness, () => eventLatencies(harness, app, author, threadPaths, receiver));
      const worker = await workerRate(harness, app, receiver);
      await deleteWebhook(app, webhookId);

      const load = { baseUrl: system.url, method: 'POST' as const, path: threadPaths, headers: app.api.headers, body: messageBody(author, 'hello'), connections };
      const [none, up, down] = await messageCreateRounds(harness, app, load, receiver);

      const latencyP50 = percentile(latency.result, 50);
      // Each row with the CPU shares of the measurement it comes from, to say where the time went when it misses.
      const measured: [Row, CpuShares | null][] = [
        ...throughputRows(up, none).map((row): [Row, CpuShares | null] => [row, up.cpu]),
        ...throughputRows(down, none).map((row): [Row, CpuShares | null] => [row, down.cpu]),
        [
          {
            figure: "conversation worker's relay: events handed over",
            value: `${up.relayPerSecond.toFixed(0)}/s receiver up`,
            baseline: `${none.relayPerSecond.toFixed(0)}/s no webhook`,
            ratio: fmt.ratio(up.relayPerSecond / none.relayPerSecond),
            target: 'report',
            met: null,
          },
          up.relayCpu,
        ],
        [
          {
            figure: 'one webhooks worker: deliveries',
            value: `${worker.perSecond.toFixed(0)}/s`,
            baseline: '—',
            ratio: '—',
            target: `≥ ${DELIVERY_RATE_TARGET}/s`,
            met: worker.perSecond >= DELIVERY_RATE_TARGET,
          },
          worker.cpu,
        ],
        [
          {
            figure: `event latency at ${LATENCY_RATE} creates/s: p50`,
            value: fmt.ms(latencyP50),
            baseline: '—',
            ratio: '—',
            target: `< ${fmt.ms(LATENCY_TARGET_MS)}`,
            met: latencyP50 < LATENCY_TARGET_MS,
          },
          latency.cpu,
        ],
        [
          { figure: `event latency at ${LATENCY_RATE} creates/s: p99`, value: fmt.ms(percentile(latency.result, 99)), baseline: '—', ratio: '—', target: '—', met: null },
          latency.cpu,
        ],
      ];
      section.rows.push(...measured.map(([row]) => row));
      for (const [row, cpu] of measured)
        if (row.met === false && cpu) section.notes.push(`Missed: ${row.figure} (${row.value}); meanwhile ${describeCpu(cpu)}.`);
      section.notes.push(
        'Message create per round (no webhook / receiver up / receiver down): ' +
          none.rounds.map((rps, round) => [rps, up.rounds[round], down.rounds[round]].map((value) => value.toFixed(0)).join(' / ')).join('; ') +
          ' req/s.',
        "Backlogs the loads left in the conversation outbox, relayed in order in batches of up to 100 entries: " +
          [none, up, down].map((setting) => `${setting.label} ${setting.backlogs.join(', ')}`).join('; ') +
          ` events (relayed at a median of ${down.relayPerSecond.toFixed(0)}/s receiver down).`,
      );
      for (const [label, cpu] of [
        ['message create, no webhook (mean of the rounds)', none.cpu],
        ['message create, receiver up (mean of the rounds)', up.cpu],
        ['message create, receiver down (mean of the rounds)', down.cpu],
        ['relaying the backlog, no webhook (mean of the rounds)', none.relayCpu],
        ['relaying the backlog, receiver up (mean of the rounds)', up.relayCpu],
        ['event latency', latency.cpu],
        ["the webhooks worker's deliveries", worker.cpu],
      ] as const)
        if (cpu) section.notes.push(`${label}: ${describeCpu(cpu)}.`);
    } finally {
      await receiver.close();
    }
    return section;
  },
};
