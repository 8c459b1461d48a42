import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { partitionsEnd } from '../../../user/backup/backup-file.js';
import { readBytes } from '../../support/loop-device.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MiB = 1024 * 1024;
const SIZE = 64 * MiB;

/** The first 2 MiB of a 64 MiB disk image that sfdisk partitioned with `script`. */
function head(name: string, script: string): Buffer {
  const path = join(dir, name);
  execFileSync('truncate', ['-s', String(SIZE), path]);
  if (script !== '') execFileSync('sfdisk', ['--quiet', path], { input: script });
  return readBytes(path, 0, 2 * MiB);
}

describe('where --trim-to-partitions stops', () => {
  it('at the end of the partition that ends last, whatever its number (MBR)', () => {
    expect(
      partitionsEnd(
        head('mbr.img', 'label: dos\nstart=20480, size=8192, type=83\nstart=2048, size=4096, type=c\n'),
        SIZE,
        'mbr.img',
      ),
    ).toBe((20480 + 8192) * 512);
  });

  it('at the end of an extended partition, which holds its logical ones (MBR)', () => {
    expect(
      partitionsEnd(
        head(
          'ext.img',
          'label: dos\nstart=2048, size=4096, type=c\nstart=8192, size=40960, type=5\nstart=10240, size=8192, type=83\n',
        ),
        SIZE,
        'ext.img',
      ),
    ).toBe((8192 + 40960) * 512);
  });

  it('at the last partition of a GPT, before the backup table at the end of the disk', () => {
    expect(
      partitionsEnd(
        head('gpt.img', 'label: gpt\nstart=2048, size=8192, type=L\nstart=10240, size=16384, type=L\n'),
        SIZE,
        'gpt.img',
      ),
    ).toBe((10240 + 16384) * 512);
  });

  it('nowhere on a disk without a partition table: it says so', () => {
    expect(() => partitionsEnd(head('blank.img', ''), SIZE, '/dev/sdz')).toThrow(
      /\/dev\/sdz has no partition table.*back up the whole drive instead/,
    );
  });
});
