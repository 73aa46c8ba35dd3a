/**
 * Scenario 6, scale-out: message create through a gateway whose CONVERSATION_URL is a round-robin
 * TCP balancer (as a Kubernetes Service would be), with one and then two conversation replicas
 * behind it. Both runs take the same path, so their ratio is what the second replica brings.
 */
import { cpus } from 'node:os';
import { messageBody } from '../api.js';
import { describeCpu, measure, rotate, seedConversations, type Harness, type Measured, type Scenario } from '../harness.js';
import { fmt, type Section } from '../report.js';

/** What the ratio means on this machine, from where the CPU went with one replica. */
function explain(ratio: number, one: Measured): string {
  const cores = cpus().length;
  const replica = one.cpu?.processes.find((p) => p.name === 'conversation')?.share ?? NaN;
  const busy = one.cpu ? `the machine was ${fmt.percent(one.cpu.busy)} busy and the replica used ${fmt.percent(replica * cores)} of one core` : 'CPU use unknown';
  const setting =
    `This machine has ${cores} cores, shared by the gateway, the conversation replicas, identity (asked about the author of ` +
    `every message), PostgreSQL (about ten statements per message create), Redis, the balancer and the load generator.`;
  if (ratio >= 1.2)
    return `${setting} With one replica ${busy}: its single event loop was the bottleneck while cores were left, so a second ` +
      `replica used them (${fmt.ratio(ratio)}).`;
  return `${setting} With one replica ${busy}. A second replica adds an event loop, not a core: with the cores already busy ` +
    `it splits the same CPU between two processes and adds a second process's JIT, GC and connection pool, hence ` +
    `${fmt.ratio(ratio)}. Scaling out pays where each replica gets its own cores (pods on separate nodes) and PostgreSQL has headroom.`;
}

export const scaleOut: Scenario = {
  key: 'scale-out',
  async run(harness: Harness): Promise<Section> {
    const { connections, system } = harness;
    const section: Section = {
      title: '6. Scale-out',
      method:
        `Message create (spread over 100 threads) at ${connections} connections, ${harness.seconds} s after ${harness.warmupSeconds} s ` +
        `of warm-up, through a second gateway whose conversation service is a round-robin TCP balancer (bench/src/balancer.ts, ` +
        `a process standing in for a Kubernetes Service) in front of one, then two conversation replicas.`,
      rows: [],
      notes: [],
    };
    if (!system.scaleOut) {
      section.notes.push('Skipped: a running system (BENCH_URL) is scaled by its operator.');
      return section;
    }
    const seeded = await seedConversations(harness, 'bench scale-out', 2, 100);
    const scaled = await system.scaleOut();
    try {
      const load = {
        baseUrl: scaled.url,
        method: 'POST' as const,
        path: rotate(seeded.threadIds.map((id) => `/v1/threads/${id}/messages`)),
        headers: seeded.app.api.headers,
        body: messageBody(seeded.userIds[0], 'hello'),
        connections,
      };
      await scaled.replicas(1);
      const one = await measure(harness, 'message create, 1 replica', load);
      await scaled.replicas(2);
      const two = await measure(harness, 'message create, 2 replicas', load);
      const ratio = two.rps / one.rps;
      section.rows.push(
        { figure: 'message create: throughput', value: `${fmt.rps(two.rps)} (2 replicas)`, baseline: `${fmt.rps(one.rps)} (1 replica)`, ratio: fmt.ratio(ratio), target: 'report', met: null },
        { figure: 'message create: p50', value: fmt.ms(two.p50), baseline: fmt.ms(one.p50), ratio: fmt.ratio(two.p50 / one.p50), target: 'report', met: null },
        { figure: 'message create: p99', value: fmt.ms(two.p99), baseline: fmt.ms(one.p99), ratio: fmt.ratio(two.p99 / one.p99), target: 'report', met: null },
      );
      section.notes.push(`One replica: ${describeCpu(one.cpu)}.`, `Two replicas: ${describeCpu(two.cpu)}.`, explain(ratio, one));
    } finally {
      await scaled.stop();
    }
    return section;
  },
};
