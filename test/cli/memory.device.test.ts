import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomFillSync } from 'node:crypto';
import { expect, it } from 'vitest';
import { GiB, MiB } from '../../common/domain/units.js';
import { collect, assertTestTarget, spawnCli } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, scratchDir } from '../support/loop-device.js';

/** An image of `size` bytes made of one random MiB repeated: cheap to make, still not zeros. */
function patternImage(path: string, size: number): void {
  const block = randomFillSync(Buffer.alloc(MiB));
  const fd = openSync(path, 'w');
  for (let done = 0; done < size; done += MiB) writeSync(fd, block, 0, Math.min(MiB, size - done));
  closeSync(fd);
}

/** Peak resident memory in KiB of a whole `sluice flash` run, as GNU time measures it. */
async function peakRssKiB(image: string, target: string): Promise<number> {
  assertTestTarget(target);
  const run = await collect(
    spawnCli(['flash', '--yes', '--json', image, target], {
      wrapper: ['/usr/bin/time', '--format', 'peak-rss-kib=%M'],
    }),
  );
  expect(run.code).toBe(0);
  const match = /peak-rss-kib=(\d+)/.exec(run.stderr);
  return Number(match?.[1]);
}

describeDevices('memory does not grow with the image', () => {
  it('peak RSS for a 4 GiB image is within 5% of a 256 MiB one', async () => {
    const dir = scratchDir();
    const small = join(dir, 'small.img');
    const large = join(dir, 'large.img');
    patternImage(small, 256 * MiB);
    patternImage(large, 4 * GiB);
    const loop = createLoop({ size: 4 * GiB + 16 * MiB, dir, fill: 'sparse' });

    const smallRss = await peakRssKiB(small, loop.path);
    const largeRss = await peakRssKiB(large, loop.path);

    expect(Math.abs(largeRss - smallRss) / smallRss).toBeLessThan(0.05);
  });
});
