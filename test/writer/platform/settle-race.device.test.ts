/**
 * After a write, partx makes the kernel read the new partition table (and udisksctl powers a USB
 * drive off). They take a name, and as root they act on whatever that name leads to when they
 * run: the name must be the written device's own node, never the path the job was given, which a
 * symbolic link turned in the meantime makes another disk (finding 7). The engine here is given a
 * link that another process keeps turning between two loop devices; partx, wrapped to log what it
 * is run on, must name the device that was written every time. (udisksctl is never reached for a
 * loop device, which has nothing to power off; it is given the same node.)
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { flash } from '../../../writer/flash.js';
import { describeDevices } from '../../support/device-suite.js';
import { raceLink } from '../../support/link-racer.js';
import {
  assertOwnedLoop,
  createLoop,
  digestFile,
  readBytes,
  scratchDir,
  writeRandomFile,
} from '../../support/loop-device.js';

const RUNS = 100;
const IMAGE_BYTES = 1 * MiB + 4096;

/** A directory with a partx that logs what it is run on (and where that name leads now), then runs the real one. */
function loggingPartx(dir: string, log: string): string {
  const real = execFileSync('sh', ['-c', 'command -v partx'], { encoding: 'utf8' }).trim();
  const bin = join(dir, 'bin');
  execFileSync('mkdir', [bin]);
  const wrapper = join(bin, 'partx');
  writeFileSync(
    wrapper,
    `#!/bin/sh\nfor last; do :; done\necho "$last $(readlink -f -- "$last")" >> '${log}'\nexec '${real}' "$@"\n`,
  );
  chmodSync(wrapper, 0o755);
  return bin;
}

describeDevices('tools run after a write, while the link the job was given is turned', () => {
  it(`partx is run on the device that was written, never where the link leads by then (${RUNS} runs)`, async () => {
    const dir = scratchDir();
    const a = createLoop({ size: 4 * MiB, dir });
    const b = createLoop({ size: 4 * MiB, dir });
    assertOwnedLoop(a.path);
    assertOwnedLoop(b.path);
    const log = join(dir, 'partx.log');
    writeFileSync(log, '');
    const path = process.env['PATH'];
    process.env['PATH'] = `${loggingPartx(dir, log)}:${path ?? ''}`;
    const link = join(dir, 'card');
    const racer = raceLink(link, [a.path, b.path]);
    const image = join(dir, 'image.img');
    const written = { [a.path]: 0, [b.path]: 0, none: 0 };
    try {
      for (let run = 0; run < RUNS; run++) {
        // A new image each time, so a write shows in the digest of the device it went to.
        writeRandomFile(image, IMAGE_BYTES);
        const before = { [a.path]: digestFile(a.backing), [b.path]: digestFile(b.backing) };
        const fd = openSync(image, 'r');
        let result;
        try {
          [result] = await flash({
            source: fd,
            imageSize: IMAGE_BYTES,
            sourceSeekable: true,
            targets: [link],
            verify: true,
            eject: false,
          });
        } finally {
          closeSync(fd);
        }
        const changed = [a, b].filter((loop) => digestFile(loop.backing) !== before[loop.path]);
        const calls = readFileSync(log, 'utf8').trim().split('\n').filter(Boolean);
        writeFileSync(log, '');
        if (result?.status === 'ok') {
          // Exactly one device took the image, and partx named it, by its own node, every time.
          expect(changed).toHaveLength(1);
          const [target] = changed;
          if (target === undefined) throw new Error('unreachable');
          expect(readBytes(target.backing, 0, IMAGE_BYTES).equals(readFileSync(image))).toBe(true);
          expect(calls.length).toBeGreaterThan(0);
          expect(calls).toEqual(calls.map(() => `${target.path} ${target.path}`));
          written[target.path] = (written[target.path] ?? 0) + 1;
        } else {
          // Refused because the link turned between the look and the open: nothing written.
          expect(result).toMatchObject({
            status: 'failed',
            code: 'target-not-found',
            message: expect.stringContaining('changed between checking and opening') as unknown,
          });
          expect(changed).toEqual([]);
          written.none += 1;
        }
      }
    } finally {
      await racer.stop();
      process.env['PATH'] = path;
    }
    console.log(`flash to a turning link, ${RUNS} runs: written to`, written);
    // The race went both ways.
    expect(written[a.path]).toBeGreaterThan(0);
    expect(written[b.path]).toBeGreaterThan(0);
  });
});
