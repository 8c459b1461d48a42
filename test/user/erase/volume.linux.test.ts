import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GiB, KiB, MiB } from '../../../common/domain/units.js';
import { planBytesOf } from '../../../user/erase/stream.js';
import { ERASE_ALIGN, erasePlan, planBytes, type ErasePlan } from '../../../user/erase/volume.js';
import { cleanupLoops, scratchDir } from '../../support/loop-device.js';

afterAll(cleanupLoops);

function plan(driveBytes: number, label: string | null = null): ErasePlan {
  return erasePlan({ driveBytes, sectorBytes: 512, label, serial: 0x1234abcd, diskSignature: 0x5eed });
}

/** The plan's partition as a sparse file: what fsck and blkid read (they take no offset into a drive). */
function partitionFile(p: ErasePlan): string {
  const path = join(scratchDir(), `partition-${p.driveBytes}.img`);
  const fd = openSync(path, 'w');
  try {
    ftruncateSync(fd, p.partitionBytes);
    const ranges = p.extents.flatMap(([offset, length]) => [offset, length]);
    let extent = 0;
    let at = ranges[0] ?? 0;
    let left = ranges[1] ?? 0;
    for (const piece of planBytesOf(p)) {
      const from = Math.max(at, p.partitionStart);
      if (from < at + piece.length) writeSync(fd, piece, from - at, at + piece.length - from, from - p.partitionStart);
      at += piece.length;
      left -= piece.length;
      if (left === 0 && ++extent < p.extents.length)
        [at, left] = [ranges[extent * 2] ?? 0, ranges[extent * 2 + 1] ?? 0];
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

function fsck(p: ErasePlan, file: string): { status: number | null; output: string } {
  const run = spawnSync(p.filesystem === 'fat32' ? 'fsck.fat' : 'fsck.exfat', ['-n', file], { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('erase layout', () => {
  const sizes: { drive: number; filesystem: string; cluster: number }[] = [
    { drive: 64 * MiB, filesystem: 'fat32', cluster: 512 },
    { drive: 256 * MiB, filesystem: 'fat32', cluster: 2 * KiB },
    { drive: 2 * GiB, filesystem: 'fat32', cluster: 16 * KiB },
    { drive: 8 * GiB, filesystem: 'fat32', cluster: 32 * KiB },
    { drive: 32 * GiB, filesystem: 'fat32', cluster: 32 * KiB },
    { drive: 32 * GiB + MiB, filesystem: 'exfat', cluster: 128 * KiB },
    { drive: 40 * GiB, filesystem: 'exfat', cluster: 128 * KiB },
    { drive: 600 * GiB, filesystem: 'exfat', cluster: 256 * KiB },
  ];
  for (const { drive, filesystem, cluster } of sizes) {
    it(`gives a ${drive / MiB} MiB drive ${filesystem} with ${cluster / KiB} KiB clusters that fsck passes`, () => {
      const p = plan(drive, 'SLUICE');
      expect(p).toMatchObject({
        filesystem,
        clusterBytes: cluster,
        partitionStart: ERASE_ALIGN,
        partitionBytes: drive - ERASE_ALIGN,
      });
      // FAT32 needs 65,525 clusters, or every OS but Linux reads it as FAT16.
      if (filesystem === 'fat32') expect(p.clusters).toBeGreaterThanOrEqual(65_525);
      // Written: the tables at the head and the last MiB; the 4 KiB alignment direct I/O needs.
      for (const [offset, length] of p.extents)
        expect([offset % 4096, offset + length === drive || length % 4096 === 0]).toEqual([0, true]);
      expect(p.extents.at(-1)?.[0]).toBe(drive - MiB);
      // 9.4 MB for 256 MiB, 17.9 MB for 32 GiB (two 4 MiB FATs), 9.8 MB for 40 GiB, 18.9 MB for 600 GiB.
      expect(planBytes(p)).toBeLessThan(64 * MiB);
      const file = partitionFile(p);
      const checked = fsck(p, file);
      expect(checked.status, checked.output).toBe(0);
      const probed = execFileSync('blkid', ['-p', '-o', 'export', file], { encoding: 'utf8' });
      expect(probed).toContain(`TYPE=${filesystem === 'fat32' ? 'vfat' : 'exfat'}`);
      expect(probed).toContain('LABEL=SLUICE');
    });
  }

  it('puts the data region (FAT32) or the cluster heap (exFAT) on a 4 MiB boundary of the drive', () => {
    const fat = plan(8 * GiB);
    const boot = Buffer.from(fat.patches.find((x) => x.offset === fat.partitionStart)?.bytes ?? []);
    const dataStart = fat.partitionStart + (boot.readUInt16LE(14) + 2 * boot.readUInt32LE(36)) * 512;
    expect(dataStart % ERASE_ALIGN).toBe(0);
    const ex = plan(64 * GiB);
    const exBoot = Buffer.from(ex.patches.find((x) => x.offset === ex.partitionStart)?.bytes ?? []);
    expect((ex.partitionStart + exBoot.readUInt32LE(88) * 512) % ERASE_ALIGN).toBe(0);
  });

  it('writes the partition table: one partition from 4 MiB to the end, FAT32 LBA or exFAT', () => {
    for (const [drive, type] of [
      [4 * GiB, 'c'],
      [64 * GiB, '7'],
    ] as const) {
      const p = plan(drive);
      const file = join(scratchDir(), 'table.img');
      const fd = openSync(file, 'w');
      ftruncateSync(fd, drive);
      const head = planBytesOf(p).next().value as Buffer;
      writeSync(fd, head, 0, 512, 0);
      closeSync(fd);
      const table = JSON.parse(execFileSync('sfdisk', ['--json', file], { encoding: 'utf8' })) as {
        partitiontable: { label: string; partitions: { start: number; size: number; type: string }[] };
      };
      expect(table.partitiontable).toMatchObject({
        label: 'dos',
        partitions: [{ start: ERASE_ALIGN / 512, size: (drive - ERASE_ALIGN) / 512, type }],
      });
    }
  });

  it('refuses what it cannot make, with the reason', () => {
    expect(() => plan(32 * MiB)).toThrow(/too small for FAT32/);
    expect(() => plan(3 * 1024 * GiB)).toThrow(/larger than an MBR partition table can describe/);
    expect(() => plan(GiB, 'a/b')).toThrow(/cannot be a FAT32 label/);
    expect(() => plan(GiB, 'TWELVE CHARS')).toThrow(/cannot be a FAT32 label/);
    expect(() => plan(GiB, 'Ünïcode')).toThrow(/cannot be a FAT32 label/);
    expect(() => plan(64 * GiB, 'a:b')).toThrow(/cannot be an exFAT label/);
    expect(() => erasePlan({ driveBytes: GiB, sectorBytes: 520, label: null, serial: 1, diskSignature: 1 })).toThrow(
      /520-byte sectors/,
    );
  });

  it('stores FAT labels in upper case and exFAT labels as given', () => {
    expect(plan(GiB, 'my card').label).toBe('MY CARD');
    expect(plan(64 * GiB, 'Kärtchen').label).toBe('Kärtchen');
  });
});
