import { createServer } from 'node:net';

/*
 * Ports for child processes to listen on, chosen so that nothing else takes them before the child
 * does, however long it takes to start (`npm start` builds first, for half a minute):
 * - below Linux's ephemeral range (32768 and up), from which the kernel hands out the ports of
 *   every listen(0) and every outgoing connection, so no in-process server or client takes them;
 * - each process from its own slice of that space (a test worker by its pool id), so two test
 *   workers never pick the same one;
 * - in turn through the slice, so a port is handed out again only after the whole slice was,
 *   never to the next system while the last one's processes may still be stopping;
 * - each checked free on every address when handed out.
 */
const FIRST_PORT = 20_000;
const SPACE = 32_768 - FIRST_PORT;
const SLICES = 8;
const SLICE = Math.floor(SPACE / SLICES);
const slice = Number(process.env.VITEST_POOL_ID ?? process.pid) % SLICES;
let cursor = 0;

/** Whether `port` can be bound on every address (so nothing listens on it, on any of them). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, () => probe.close(() => resolve(true)));
  });
}

/**
 * The next base in this process's slice such that base + each offset is free now; the offsets'
 * ports are not handed out again until the cursor comes round.
 */
async function nextFree(offsets: number[]): Promise<number> {
  const span = Math.max(...offsets) + 1;
  for (let tried = 0; tried < SLICE; tried += span) {
    if (cursor + span > SLICE) cursor = 0;
    const base = FIRST_PORT + slice * SLICE + cursor;
    cursor += span;
    const results = await Promise.all(offsets.map((offset) => bindable(base + offset)));
    if (results.every(Boolean)) return base;
  }
  throw new Error(`no free range of ${span} ports found in ${FIRST_PORT + slice * SLICE}–${FIRST_PORT + (slice + 1) * SLICE - 1}`);
}

/** A port that is free now, for a child process to listen on. */
export function freePort(): Promise<number> {
  return nextFree([0]);
}

/** `count` distinct ports that are free now. */
export async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < count; i++) ports.push(await freePort());
  return ports;
}

/**
 * A base port such that base + each offset is free now, for processes that derive their ports
 * from one base (METRICS_PORT_BASE of `npm start`).
 */
export function freePortBase(offsets: number[]): Promise<number> {
  return nextFree(offsets);
}
