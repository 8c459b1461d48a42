import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  filesystemLabel,
  PARTITION_TABLE_BYTES,
  readPartitionTable,
} from '../../../../user/images/formats/partition-table.js';
import { readBytes } from '../../../support/loop-device.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MiB = 1024 * 1024;

function disk(name: string, script: string): string {
  const path = join(dir, name);
  execFileSync('truncate', ['-s', String(64 * MiB), path]);
  execFileSync('sfdisk', ['--quiet', path], { input: script });
  return path;
}

describe('readPartitionTable, as sfdisk wrote it', () => {
  it('GPT: places, types and names', () => {
    const path = disk(
      'gpt.img',
      'label: gpt\nstart=2048, size=16384, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name="boot"\nstart=18432, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name="rootfs"\n',
    );
    const table = readPartitionTable(readBytes(path, 0, PARTITION_TABLE_BYTES));
    expect(table.type).toBe('gpt');
    expect(table.partitions).toEqual([
      { number: 1, offset: MiB, size: 8 * MiB, type: 'EFI System', label: 'boot' },
      expect.objectContaining({ number: 2, offset: 9 * MiB, type: 'Linux filesystem', label: 'rootfs' }),
    ]);
  });

  it('MBR: places and types, labels from the filesystems', () => {
    const path = disk('mbr.img', 'label: dos\nstart=2048, size=16384, type=c\nstart=18432, type=83\n');
    const table = readPartitionTable(readBytes(path, 0, PARTITION_TABLE_BYTES));
    expect(table.type).toBe('mbr');
    expect(table.partitions.map((p) => [p.number, p.offset, p.type])).toEqual([
      [1, MiB, 'FAT32 (LBA)'],
      [2, 9 * MiB, 'Linux'],
    ]);
    const fat = join(dir, 'fat.part');
    execFileSync('truncate', ['-s', String(8 * MiB), fat]);
    execFileSync('mkfs.vfat', ['-n', 'BOOTFS', fat], { stdio: 'ignore' });
    expect(filesystemLabel(readBytes(fat, 0, 2048))).toBe('BOOTFS');
    const ext = join(dir, 'ext.part');
    execFileSync('truncate', ['-s', String(8 * MiB), ext]);
    execFileSync('mkfs.ext4', ['-q', '-F', '-L', 'rootfs', ext]);
    expect(filesystemLabel(readBytes(ext, 0, 2048))).toBe('rootfs');
  });

  it('a disk with no table, or a bare FAT volume (which has a boot signature too), has none', () => {
    expect(readPartitionTable(Buffer.alloc(PARTITION_TABLE_BYTES)).type).toBe('none');
    const fat = join(dir, 'fat.part');
    expect(readPartitionTable(readBytes(fat, 0, PARTITION_TABLE_BYTES)).type).toBe('none');
  });
});
