import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { flashCli, resultsOf } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, scratchDir, smallTmpfs, writeRandomFile } from '../support/loop-device.js';

describeDevices('a device that fails mid-write', () => {
  it('reports the I/O error with its offset, exits 1, and never claims success', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 48 * MiB);
    // The loop claims 64 MiB but its backing file lives on 12 MiB of tmpfs.
    const loop = createLoop({ size: 64 * MiB, fill: 'sparse', dir: smallTmpfs(12 * MiB) });

    const run = await flashCli(image, [loop.path]);

    expect(run.code).toBe(1);
    const result = resultsOf(run).get(loop.path);
    expect(result).toMatchObject({ status: 'failed', code: 'target-full' });
    expect(result?.offset).toBeGreaterThan(8 * MiB);
    expect(result?.offset).toBeLessThanOrEqual(12 * MiB);
    expect(result?.message).toContain('ran out of space');
    expect(result?.message).toContain(`byte offset ${result?.offset}`);
    expect(result?.message).toMatch(/ The drive is incomplete; flash it again before use\.$/);
    expect(run.events.some((e) => e.type === 'result' && e['status'] === 'ok')).toBe(false);
    expect(run.events.some((e) => e.type === 'progress' && e['phase'] === 'verifying')).toBe(false);
  });
});
