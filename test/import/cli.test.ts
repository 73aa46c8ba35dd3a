/**
 * `npm run import -- <dump.sql>`: refuses a dump that does not end with COMMIT; before writing
 * anything, and otherwise has a worker import it, shows progress lines (no terminal here) and ends
 * with the summary of what was imported and skipped.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotDatabase } from '../support/db-snapshot.js';
import { FIXTURE_DUMP } from '../support/imports.js';
import { startSystem, type TestSystem } from '../support/system.js';

const CLI = join(import.meta.dirname, '..', '..', 'services', 'identity', 'dist', 'cli', 'import.js');

let system: TestSystem;
let dir: string;

beforeAll(async () => {
  system = await startSystem();
  dir = await mkdtemp(join(tmpdir(), 'import-cli-'));
});
afterAll(async () => {
  await system?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function runCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...system.env, LOG_LEVEL: 'silent' },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('npm run import', () => {
  it('refuses a truncated dump, naming why, and writes nothing', async () => {
    const whole = await readFile(FIXTURE_DUMP, 'utf8');
    const truncated = join(dir, 'truncated.sql');
    await writeFile(truncated, whole.slice(0, Math.floor(whole.length / 2)));
    const before = await snapshotDatabase(system.sql);
    const result = await runCli(truncated);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('The dump is incomplete');
    expect(await snapshotDatabase(system.sql)).toEqual(before);
  });

  it('refuses a dump whose stream ended with the server\'s error comment', async () => {
    const whole = await readFile(FIXTURE_DUMP, 'utf8');
    const broken = join(dir, 'broken.sql');
    await writeFile(broken, `${whole.slice(0, whole.lastIndexOf('COMMIT;'))}\n-- ERROR: canceling statement due to statement timeout\n`);
    const before = await snapshotDatabase(system.sql);
    const result = await runCli(broken);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('instead of COMMIT;');
    expect(await snapshotDatabase(system.sql)).toEqual(before);
  });

  it('imports the fixture, printing progress and a summary with what was skipped and why', async () => {
    const result = await runCli(FIXTURE_DUMP.pathname);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Import [0-9a-f-]{36} of .*customer-dump\.sql into customer c0ffee00-0000-4000-8000-000000000001 queued\./);
    expect(result.stdout).toMatch(/100% 0\.3 MB\/0\.3 MB {2}\d[\d,]* rows, [\d,]+ rows\/s/);
    expect(result.stdout).toContain(': completed in ');
    for (const [entity, count] of Object.entries({ applications: 2, users: 28, groups: 7, memberships: 39, threads: 12, messages: 46, reactions: 11, mentions: 11, participants: 33, notifications: 67, webhooks: 1, preferences: 1 }))
      expect(result.stdout).toMatch(new RegExp(`\\n  ${entity} +${count} / 0\\n`));
    expect(result.stdout).toMatch(/message_notifications +54 rows: e-mail records/);
    expect(result.stdout).not.toContain('user_preferences');
  });

  it('says how to call it when the arguments are wrong', async () => {
    const result = await runCli();
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('usage: npm run import -- <dump.sql> [--overwrite] [--files DIR]');
    expect((await runCli(FIXTURE_DUMP.pathname, '--files')).code).toBe(2);
  });

  it('refuses a directory of file blobs that does not exist, before writing anything', async () => {
    const before = await snapshotDatabase(system.sql);
    const result = await runCli(FIXTURE_DUMP.pathname, '--files', join(dir, 'no-such-directory'));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no-such-directory: no such directory');
    expect(await snapshotDatabase(system.sql)).toEqual(before);
  });
});
