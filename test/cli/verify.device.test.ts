import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { KiB, MiB } from '../../common/domain/units.js';
import { flashCli, resultsOf, verifyCli } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, scratchDir, writeRandomFile } from '../support/loop-device.js';

/** A read through the page cache, from a descriptor the test holds open. */
function readCached(fd: number, offset: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  readSync(fd, buffer, 0, length, offset);
  return buffer;
}

describeDevices('sluice verify', () => {
  it('passes on a freshly flashed device', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 10 * MiB + 3);
    const loop = createLoop({ size: 16 * MiB, dir });
    expect((await flashCli(image, [loop.path])).code).toBe(0);
    const run = await verifyCli(image, loop.path);
    expect(run.code).toBe(0);
    expect(resultsOf(run).get(loop.path)).toMatchObject({
      status: 'ok',
      written: false,
      verified: true,
      bytes: 10 * MiB + 3,
    });
  });

  it('reads the device, not the page cache: a corrupted byte is found at its exact offset', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 12 * MiB);
    const loop = createLoop({ size: 16 * MiB, dir });
    expect((await flashCli(image, [loop.path])).code).toBe(0);

    // Hold the device open so the kernel keeps its page cache, and fill that cache with the good bytes.
    const holder = openSync(loop.path, 'r');
    try {
      execFileSync('dd', [`if=${loop.path}`, 'of=/dev/null', 'bs=1M', 'status=none']);
      const corruptAt = 7 * MiB + 123 * KiB + 45;
      const original = readCached(holder, corruptAt, 1);
      const backing = openSync(loop.backing, 'r+');
      writeSync(backing, Buffer.from([(original[0] ?? 0) ^ 0xff]), 0, 1, corruptAt);
      closeSync(backing);
      // The control: a cached read still shows the good byte, so only a real device read can catch this.
      expect(readCached(holder, corruptAt, 1)).toEqual(original);

      const run = await verifyCli(image, loop.path);
      expect(run.code).toBe(1);
      expect(resultsOf(run).get(loop.path)).toMatchObject({
        status: 'failed',
        code: 'verify-mismatch',
        offset: corruptAt,
      });
      expect(run.stdout).toContain(String(corruptAt));
    } finally {
      closeSync(holder);
    }
  });
});
