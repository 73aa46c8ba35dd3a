/**
 * Scenario 1, gateway overhead: the same requests through the gateway (token check, routing,
 * proxy) and straight to the owning service with the internal headers the gateway would add.
 */
import { internalHeaders, messageBody } from '../api.js';
import { describeCpu, measure, rotate, seedConversations, type Harness, type Measured, type Scenario } from '../harness.js';
import { fmt, type Row, type Section } from '../report.js';

/** Moderate concurrency: the overhead of one hop, not the saturation of the machine. */
const CONNECTIONS = 10;
const THROUGHPUT_TARGET = 0.85;
const P50_TARGET_MS = 2;

function rows(operation: string, gateway: Measured, direct: Measured): Row[] {
  const ratio = gateway.rps / direct.rps;
  const added = gateway.p50 - direct.p50;
  return [
    {
      figure: `${operation}: throughput`,
      value: fmt.rps(gateway.rps),
      baseline: `${fmt.rps(direct.rps)} direct`,
      ratio: fmt.ratio(ratio),
      target: `≥ ${fmt.ratio(THROUGHPUT_TARGET)} (costs ≤ 15 %)`,
      met: ratio >= THROUGHPUT_TARGET,
    },
    {
      figure: `${operation}: p50`,
      value: fmt.ms(gateway.p50),
      baseline: `${fmt.ms(direct.p50)} direct`,
      ratio: `+${fmt.ms(added)}`,
      target: `≤ +${fmt.ms(P50_TARGET_MS)}`,
      met: added <= P50_TARGET_MS,
    },
    {
      figure: `${operation}: p99`,
      value: fmt.ms(gateway.p99),
      baseline: `${fmt.ms(direct.p99)} direct`,
      ratio: `+${fmt.ms(gateway.p99 - direct.p99)}`,
      target: '—',
      met: null,
    },
  ];
}

export const gatewayOverhead: Scenario = {
  key: 'gateway',
  async run(harness: Harness): Promise<Section> {
    const section: Section = {
      title: '1. Gateway overhead',
      method:
        `\`GET /v1/users/<ID>\` and message create (\`POST /v1/threads/<ID>/messages\`, spread over 50 threads), ` +
        `${CONNECTIONS} connections, ${harness.seconds} s each after ${harness.warmupSeconds} s of warm-up: through the gateway ` +
        `(server token) and straight to the owning service with the internal headers (baseline).`,
      rows: [],
      notes: [],
    };
    const { direct } = harness.system;
    if (!direct) {
      section.notes.push('Skipped: the services of a running system are reachable only with BENCH_INTERNAL_TOKEN, BENCH_IDENTITY_URL and BENCH_CONVERSATION_URL.');
      return section;
    }
    const seeded = await seedConversations(harness, 'bench gateway', 2, 50);
    const gatewayHeaders = seeded.app.api.headers;
    const serviceHeaders = internalHeaders(direct.internalToken, seeded.app.id);
    const user = `/v1/users/${seeded.userIds[0]}`;
    const threads = rotate(seeded.threadIds.map((id) => `/v1/threads/${id}/messages`));
    const create = { method: 'POST' as const, path: threads, body: messageBody(seeded.userIds[0], 'hello'), connections: CONNECTIONS };

    const results: [string, Measured, Measured][] = [
      [
        'GET user',
        await measure(harness, 'GET user via gateway', { baseUrl: harness.system.url, path: user, headers: gatewayHeaders, connections: CONNECTIONS }),
        await measure(harness, 'GET user direct', { baseUrl: direct.identity, path: user, headers: serviceHeaders, connections: CONNECTIONS }),
      ],
      [
        'message create',
        await measure(harness, 'message create via gateway', { ...create, baseUrl: harness.system.url, headers: gatewayHeaders }),
        await measure(harness, 'message create direct', { ...create, baseUrl: direct.conversation, headers: serviceHeaders }),
      ],
    ];
    for (const [operation, gateway, straight] of results) {
      section.rows.push(...rows(operation, gateway, straight));
      if (gateway.cpu) section.notes.push(`${operation} via the gateway: ${describeCpu(gateway.cpu)}.`, `${operation} direct: ${describeCpu(straight.cpu)}.`);
    }
    return section;
  },
};
