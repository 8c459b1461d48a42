import { describe, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { resultLine } from '../../cli/render.js';

describe('resultLine: the sentence a job ends with', () => {
  it('gives a flash faster than a tenth of a second its milliseconds, not "0.0 s" beside a speed', () => {
    const line = resultLine({
      status: 'ok',
      target: '/dev/sdz',
      bytes: 16 * MiB,
      written: true,
      verified: true,
      seconds: 0.012,
    });
    expect(line).toBe('/dev/sdz: written and verified, 16.8 MB in 12 ms, 1.4 GB/s.');
  });

  it('says what was left out and why, reason by reason, and only the count when the reasons do not add up to it', () => {
    const boot = {
      reason: { kind: 'free-space', partition: 1, label: 'boot', filesystem: 'FAT32' },
      bytes: 100 * 1000 * 1000,
    } as const;
    const root = {
      reason: { kind: 'free-space', partition: 2, label: null, filesystem: 'ext4' },
      bytes: 2_600_000_000,
    } as const;
    const map = { reason: { kind: 'block-map', from: 'os.img.bmap' }, bytes: 5_000_000 } as const;
    const ok = { status: 'ok', target: '/dev/sdz', bytes: 1000, written: true, verified: true, seconds: 1 } as const;
    expect(resultLine({ ...ok, skipped: 2_705_000_000, skippedFor: [boot, root, map] })).toBe(
      '/dev/sdz: written and verified, 1.0 KB in 1.0 s, 1.0 KB/s. 100 MB of free space in boot (FAT32, partition 1) not written. 2.6 GB of free space in partition 2 (ext4) not written. 5.0 MB outside the block map os.img.bmap not written.',
    );
    // A helper that took fewer ranges than were found said so by its count: only that is said.
    expect(resultLine({ ...ok, skipped: 100 * 1000 * 1000 + 4096, skippedFor: [boot] })).toBe(
      '/dev/sdz: written and verified, 1.0 KB in 1.0 s, 1.0 KB/s. 100 MB of the image not written.',
    );
    expect(resultLine({ ...ok, written: false, skipped: 2_600_000_000, skippedFor: [root] })).toBe(
      '/dev/sdz: verified, 1.0 KB match the image (1.0 s). 2.6 GB of free space in partition 2 (ext4) not compared.',
    );
  });

  it('says a cancelled drive is incomplete', () => {
    expect(resultLine({ status: 'cancelled', target: '/dev/sdz', bytes: MiB })).toBe(
      '/dev/sdz: cancelled. The drive is incomplete; flash it again before use.',
    );
  });
});
