/**
 * scripts/processes.mjs, what `npm start` gives each process besides the shared environment: its
 * heap limit (the PROCESS_MEMORY table that compose and the manifests repeat) and the address it
 * listens on (internal services on loopback only).
 */
import { describe, expect, it } from 'vitest';
import { PROCESS_MEMORY, processes } from '../support/process-catalog.js';

describe('npm start process table', () => {
  it('gives every process its heap limit from PROCESS_MEMORY', () => {
    const entries = processes({});
    expect(entries.map((entry) => entry.name).sort()).toEqual(Object.keys(PROCESS_MEMORY).sort());
    for (const entry of entries) expect(entry.env.NODE_OPTIONS, entry.name).toBe(`--max-old-space-size=${PROCESS_MEMORY[entry.name].heapMb}`);
  });

  it("keeps the operator's NODE_OPTIONS, and a heap limit set there wins", () => {
    const gateway = (env: Record<string, string>) => processes(env).find((entry) => entry.name === 'gateway')!.env;
    expect(gateway({ NODE_OPTIONS: '--enable-source-maps' }).NODE_OPTIONS).toBe(
      `--enable-source-maps --max-old-space-size=${PROCESS_MEMORY.gateway.heapMb}`,
    );
    expect(gateway({ NODE_OPTIONS: '--max-old-space-size=1024' }).NODE_OPTIONS).toBe('--max-old-space-size=1024');
  });

  it('listens on loopback unless HOST opens the gateway; services and workers stay on loopback', () => {
    for (const env of [{}, { HOST: '0.0.0.0' }]) {
      for (const entry of processes(env)) {
        const expected = entry.name === 'gateway' ? ('HOST' in env ? '0.0.0.0' : '127.0.0.1') : '127.0.0.1';
        expect(entry.env.HOST, `${entry.name} with ${JSON.stringify(env)}`).toBe(expected);
      }
    }
  });
});
