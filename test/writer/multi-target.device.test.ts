import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { Progress } from '../../common/domain/progress.js';
import { MiB } from '../../common/domain/units.js';
import { describeDevices } from '../support/device-suite.js';
import { flashFile } from '../support/engine.js';
import { createLoop, scratchDir, smallTmpfs, writeRandomFile } from '../support/loop-device.js';

describeDevices('one image, several targets', () => {
  it('writes every target from one read of the source; a target that fills up is dropped while the others finish', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    const size = 40 * MiB + 777;
    writeRandomFile(image, size);
    const good1 = createLoop({ size: 48 * MiB, dir });
    const good2 = createLoop({ size: 48 * MiB, dir });
    // 64 MiB claimed, 16 MiB of real space: fails mid-write.
    const failing = createLoop({ size: 64 * MiB, fill: 'sparse', dir: smallTmpfs(16 * MiB) });
    const progress: Progress[] = [];

    const results = await flashFile(image, [good1.path, failing.path, good2.path], {
      onProgress: (p) => progress.push(p),
    });

    expect(results.map((r) => r.status)).toEqual(['ok', 'failed', 'ok']);
    expect(results[1]).toMatchObject({ code: 'target-full' });
    const failedAt = results[1]?.status === 'failed' ? results[1].offset : undefined;
    expect(failedAt).toBeGreaterThanOrEqual(15 * MiB);
    expect(failedAt).toBeLessThanOrEqual(16 * MiB);
    const expected = readFileSync(image);
    for (const loop of [good1, good2]) expect(readFileSync(loop.backing).subarray(0, size).equals(expected)).toBe(true);
    // Each surviving target verified on its own.
    for (const loop of [good1, good2])
      expect(progress.some((p) => p.target === loop.path && p.phase === 'verifying' && p.bytesDone === size)).toBe(
        true,
      );
    expect(progress.some((p) => p.target === failing.path && p.phase === 'verifying')).toBe(false);
  });
});
