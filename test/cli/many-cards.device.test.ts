import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { collect, flashCli, spawnCli, waitForEvent, type CliRun } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import {
  assertOwnedLoop,
  createLoop,
  pullLoop,
  scratchDir,
  smallTmpfs,
  writeRandomFile,
  type LoopDevice,
} from '../support/loop-device.js';
import { throttledCards } from '../support/throttle.js';

function imageOf(size: number): { path: string; bytes: Buffer } {
  const path = join(scratchDir(), 'image.img');
  writeRandomFile(path, size);
  return { path, bytes: readFileSync(path) };
}

function holdsImage(loop: LoopDevice, image: Buffer): boolean {
  return readFileSync(loop.backing).subarray(0, image.length).equals(image);
}

function resultOf(run: CliRun, target: string): Record<string, unknown> | undefined {
  return run.events.find((e) => e.type === 'result' && e['target'] === target);
}

/** The index in the event stream of the first event that matches. */
function indexOf(run: CliRun, match: (e: CliRun['events'][number]) => boolean): number {
  return run.events.findIndex(match);
}

describeDevices('many cards from one flash, each at its own pace', () => {
  it('16 throttled cards at 8 MB/s: every one is written and verified, byte for byte', async () => {
    const image = imageOf(12 * MiB + 4096);
    const loops = Array.from({ length: 16 }, () => createLoop({ size: 16 * MiB }));
    const group = throttledCards(loops.map((loop) => ({ device: loop.path, bytesPerSecond: 8_000_000 })));
    try {
      const run = await flashCli(
        image.path,
        loops.map((l) => l.path),
        [],
        { cgroup: group.dir },
      );
      expect(run.code, run.stderr).toBe(0);
      for (const loop of loops) {
        expect(resultOf(run, loop.path)).toMatchObject({ status: 'ok', verified: true });
        expect(holdsImage(loop, image.bytes)).toBe(true);
      }
    } finally {
      group.remove();
    }
  });

  it('a card whose store fails mid-write beside two good ones: the good ones finish at their own speed, green; the failed one red with its offset', async () => {
    const image = imageOf(24 * MiB);
    const good = [createLoop({ size: 32 * MiB }), createLoop({ size: 32 * MiB })];
    // 32 MiB claimed, 8 MiB of real space, written at 2 MB/s: it fails after about 4 s.
    const failing = createLoop({ size: 32 * MiB, fill: 'sparse', dir: smallTmpfs(8 * MiB) });
    const group = throttledCards([
      ...good.map((loop) => ({ device: loop.path, bytesPerSecond: 32_000_000 })),
      { device: failing.path, bytesPerSecond: 2_000_000 },
    ]);
    try {
      const run = await flashCli(image.path, [good[0]?.path ?? '', failing.path, good[1]?.path ?? ''], [], {
        cgroup: group.dir,
      });
      for (const loop of good) {
        expect(resultOf(run, loop.path)).toMatchObject({ status: 'ok', verified: true });
        expect(holdsImage(loop, image.bytes)).toBe(true);
      }
      const failed = resultOf(run, failing.path);
      expect(failed).toMatchObject({ status: 'failed', code: 'target-full' });
      expect(Number(failed?.['offset'])).toBeGreaterThanOrEqual(6 * MiB);
      expect(Number(failed?.['offset'])).toBeLessThanOrEqual(8 * MiB);
      // Their own speed: each good card is verified to its end while the failing one is still
      // being written, below what it reached before it failed. In lock-step they would all have
      // moved at 2 MB/s until it failed.
      const lastOfFailing = run.events.findLastIndex(
        (e) => e.type === 'progress' && e['target'] === failing.path && e['phase'] === 'writing',
      );
      for (const loop of good) {
        const verified = indexOf(
          run,
          (e) =>
            e.type === 'progress' &&
            e['target'] === loop.path &&
            e['phase'] === 'verifying' &&
            e['bytesDone'] === image.bytes.length,
        );
        expect(verified).toBeGreaterThanOrEqual(0);
        expect(verified).toBeLessThan(lastOfFailing);
      }
    } finally {
      group.remove();
    }
  });

  it('an .xz onto two fast cards beside a slow one: decoded once into the cache, the fast ones finish at their own speed, and the copy is gone after', async () => {
    const image = imageOf(24 * MiB);
    execFileSync('xz', ['-T2', '-0', '-k', image.path]);
    const cache = scratchDir();
    const fast = [createLoop({ size: 32 * MiB }), createLoop({ size: 32 * MiB })];
    const slow = createLoop({ size: 32 * MiB });
    const group = throttledCards([
      ...fast.map((loop) => ({ device: loop.path, bytesPerSecond: 32_000_000 })),
      { device: slow.path, bytesPerSecond: 4_000_000 },
    ]);
    try {
      const run = await flashCli(`${image.path}.xz`, [fast[0]?.path ?? '', slow.path, fast[1]?.path ?? ''], [], {
        cgroup: group.dir,
        env: { SLUICE_CACHE_DIR: cache },
      });
      expect(run.code, run.stderr).toBe(0);
      for (const loop of [...fast, slow]) {
        expect(resultOf(run, loop.path)).toMatchObject({ status: 'ok', verified: true });
        expect(holdsImage(loop, image.bytes)).toBe(true);
      }
      // From a pipe the fast cards could run at most a ring ahead of the slow one; from the copy,
      // each is verified to its end while the slow one is still being written.
      const slowWriting = run.events.findLastIndex(
        (e) =>
          e.type === 'progress' &&
          e['target'] === slow.path &&
          e['phase'] === 'writing' &&
          Number(e['bytesDone']) < 8 * MiB,
      );
      for (const loop of fast) {
        const verified = indexOf(
          run,
          (e) =>
            e.type === 'progress' &&
            e['target'] === loop.path &&
            e['phase'] === 'verifying' &&
            e['bytesDone'] === image.bytes.length,
        );
        expect(verified).toBeGreaterThanOrEqual(0);
        expect(verified).toBeLessThan(slowWriting);
      }
      expect(run.stdout).toContain('decoded once for every card');
      expect(readdirSync(join(cache, 'images'))).toEqual([]);
    } finally {
      group.remove();
    }
  });

  it('a card pulled mid-batch ends red and says so; the others go on to green', async () => {
    const image = imageOf(32 * MiB);
    const loops = [createLoop({ size: 40 * MiB }), createLoop({ size: 40 * MiB }), createLoop({ size: 40 * MiB })];
    const [first, pulled, last] = loops;
    if (first === undefined || pulled === undefined || last === undefined) throw new Error('three cards');
    const group = throttledCards(loops.map((loop) => ({ device: loop.path, bytesPerSecond: 8_000_000 })));
    try {
      loops.forEach((l) => assertOwnedLoop(l.path));
      const child = spawnCli(['flash', '--yes', '--json', image.path, ...loops.map((l) => l.path)], {
        cgroup: group.dir,
      });
      const done = collect(child);
      await waitForEvent(
        child,
        (e) =>
          e.type === 'progress' &&
          e['target'] === pulled.path &&
          e['phase'] === 'writing' &&
          Number(e['bytesDone']) > 8 * MiB,
      );
      pullLoop(pulled, 4 * MiB);
      const run = await done;
      for (const loop of [first, last]) {
        expect(resultOf(run, loop.path)).toMatchObject({ status: 'ok', verified: true });
        expect(holdsImage(loop, image.bytes)).toBe(true);
      }
      const failed = resultOf(run, pulled.path);
      expect(failed).toMatchObject({ status: 'failed' });
      expect(['target-unplugged', 'target-full', 'write-error']).toContain(failed?.['code']);
      expect(Number(failed?.['offset'])).toBeGreaterThan(4 * MiB);
      expect(run.code).not.toBe(0);
    } finally {
      group.remove();
    }
  });
});
