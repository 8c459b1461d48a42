import { describe, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { progressLine, resultLine } from '../../cli/render.js';

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

  it('says a drive that was only read is unchanged, and that a backup’s incomplete file was deleted', () => {
    const cancelled = { status: 'cancelled', target: '/b/card.img', bytes: MiB } as const;
    expect(resultLine(cancelled, 'backup')).toBe(
      '/b/card.img: cancelled. The drive was only read: it is unchanged. The incomplete backup file was deleted.',
    );
    expect(resultLine({ ...cancelled, target: '/dev/sdz' }, 'verify')).toBe(
      '/dev/sdz: cancelled. The drive was only read: it is unchanged. Nothing was written.',
    );
    expect(resultLine({ ...cancelled, target: '/b/card.img' }, 'verify-file')).toBe(
      '/b/card.img: cancelled. The file was only read: it is unchanged.',
    );
    expect(resultLine({ ...cancelled, target: '/dev/sdz' }, 'clone')).toBe(
      '/dev/sdz: cancelled. The drive is incomplete; flash it again before use. The source drive was only read: it is unchanged.',
    );
  });
});

describe('a backup in words', () => {
  const backup = { driveBytes: 4_000_000_000, imageBytes: 4_000_000_000 };
  const progress = { target: '/b/card.img', speed: 0, eta: null, backup } as const;
  it('counts what it reads against what it reads, and says the drive it is a part of', () => {
    const used = { ...progress, phase: 'reading', bytesDone: 300_000_000, bytesTotal: 700_000_000 } as const;
    expect(progressLine(used).split('\n')).toEqual([
      expect.stringMatching(/^Reading +\[#{13}\.{17}\]  42%$/),
      '  Read 300 MB of 700 MB to read: the used blocks of the 4.0 GB drive',
    ]);
    const whole = { ...used, bytesTotal: 4_000_000_000 };
    expect(progressLine(whole).split('\n')[1]).toBe('  Read 300 MB of the 4.0 GB drive');
    const trimmed = { ...used, bytesTotal: 1_000_000_000, backup: { ...backup, imageBytes: 1_000_000_000 } };
    expect(progressLine(trimmed).split('\n')[1]).toBe(
      '  Read 300 MB of 1.0 GB to read: the 4.0 GB drive up to its last partition',
    );
    // Nothing free to leave out: the whole drive, after the tables and maps read to find that.
    const full = { ...used, bytesTotal: 4_000_400_000 };
    expect(progressLine(full).split('\n')[1]).toBe(
      '  Read 300 MB of 4.0 GB to read: the whole 4.0 GB drive, after its tables and filesystem maps',
    );
    const readBack = { ...used, phase: 'verifying', bytesDone: 100_000_000 } as const;
    expect(progressLine(readBack).split('\n')[1]).toBe(
      '  Read back 100 MB of 700 MB from the file (its holes are free space, not read)',
    );
  });

  it('ends with the bytes read, the drive, the file on disk, and whether it was read back', () => {
    const ok = { status: 'ok', target: '/b/card.img', bytes: 4_000_000_000, written: true, seconds: 20 } as const;
    const figures = {
      driveBytes: 4_000_000_000,
      readBytes: 700_000_000,
      mapBytes: 4_200_000,
      fileBytes: 690_000_000,
      fileLength: 4e9,
    };
    expect(resultLine({ ...ok, verified: true, backup: figures })).toBe(
      '/b/card.img: saved and verified: read back and compared with what was read from the drive (20 s). Read 700 MB of the 4.0 GB drive (including 4.2 MB of tables and filesystem maps read to find what is used). The image file is 4.0 GB long and takes 690 MB on disk.',
    );
    const zstd = {
      ...figures,
      mapBytes: 0,
      fileBytes: 204_800_000,
      fileLength: 204_000_000,
      compression: 'zstd',
    } as const;
    expect(resultLine({ ...ok, target: '/b/card.img.zst', verified: false, backup: zstd })).toBe(
      '/b/card.img.zst: saved, NOT verified: verification was turned off, so the file was not read back (20 s). Read 700 MB of the 4.0 GB drive. The 4.0 GB image compressed with zstd is a 204 MB file (205 MB on disk).',
    );
  });
});
