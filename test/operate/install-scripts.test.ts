/**
 * `npm ci` runs no dependency's install script that the project did not decide on: every package of
 * the lockfile that has one is named in package.json's `allowScripts` (npm 11 lists the others as
 * not reviewed at the end of every install, which a newcomer reads as something to fix; npm 12
 * skips them). All five are denied, since none is needed: optional native builds (cpu-features,
 * ssh2, msgpackr-extract, which loads its prebuilt binary without it), a version notice
 * (protobufjs) and install telemetry (@scarf/scarf).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/process-catalog.js';

const lockfile = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };

describe('install scripts', () => {
  it('are decided in allowScripts for exactly the dependencies that have one', () => {
    const withScripts = Object.entries(lockfile.packages)
      .filter(([path, entry]) => path.includes('node_modules/') && entry.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect([...new Set(withScripts)].sort()).toEqual(Object.keys(manifest.allowScripts ?? {}).sort());
  });
});
