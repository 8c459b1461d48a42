/**
 * CI's short pass of the fuzz campaign (`npm run fuzz` runs the long one): every target gets at
 * least 2,000 inputs, in the built campaign under its own memory cap; and every input that ever
 * failed (test/fixtures/fuzz/<target>/) now ends as its parser documents, within the time limit.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TargetReport } from './campaign.js';
import { TARGETS } from './targets.js';

const CAMPAIGN = resolve('out/test/fuzz/campaign.js');
const FIXTURES = 'test/fixtures/fuzz';
const SHORT_PASS_RUNS = 2000;
/**
 * CI's pass replays one fixed sequence of inputs, so a red run is a regression and not the luck of
 * the draw; `npm run fuzz` draws new ones every time (the first CI run on a random seed found the
 * truncated qcow2 v3 header now kept in test/fixtures/fuzz/).
 */
const SHORT_PASS_SEED = 20261124;

describe('the fuzz campaign', () => {
  it(`feeds every parser ${SHORT_PASS_RUNS} inputs derived from real files, and each ends as it documents, in time and memory`, () => {
    const run = spawnSync(process.execPath, ['--max-old-space-size=256', CAMPAIGN], {
      encoding: 'utf8',
      env: { ...process.env, FUZZ_RUNS: String(SHORT_PASS_RUNS), FUZZ_SEED: String(SHORT_PASS_SEED) },
      timeout: 170_000,
    });
    expect(run.stderr).toBe('');
    const reports = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as TargetReport & { peakRssBytes?: number });
    const targets = reports.filter((r) => r.target !== undefined);
    console.log(targets.map((r) => `${r.target}: ${r.executions} inputs in ${r.seconds.toFixed(1)} s`).join('\n'));
    expect(targets.map((r) => r.target)).toEqual(TARGETS.map((t) => t.name));
    for (const report of targets) {
      expect(report.failure, report.target).toBeNull();
      expect(report.executions, report.target).toBeGreaterThanOrEqual(SHORT_PASS_RUNS);
    }
    expect(run.status).toBe(0);
  }, 180_000);

  const folders = existsSync(FIXTURES) ? readdirSync(FIXTURES) : [];
  it.each(folders)('every input once found for %s now ends as documented', async (folder) => {
    const target = TARGETS.find((t) => t.name.replace(/[^a-z0-9]+/gi, '-').toLowerCase() === folder);
    expect(target, folder).toBeDefined();
    const scratch = mkdtempSync(join(tmpdir(), 'sluice-fuzz-replay-'));
    try {
      for (const file of readdirSync(join(FIXTURES, folder))) {
        const input = readFileSync(join(FIXTURES, folder, file));
        const started = performance.now();
        await target?.run(input, scratch).catch((error: unknown) => {
          if (!target.documented(error)) throw error;
        });
        expect(performance.now() - started, file).toBeLessThan(2000);
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
