import { closeSync, openSync, writeSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { dataRanges } from '../../../user/files/file-data-ranges.js';
import { scratchDir } from '../../support/loop-device.js';

const MiB = 1024 * 1024;
const dirs = [scratchDir('/dev/shm'), scratchDir('/var/tmp')];
afterAll(() => dirs.forEach((dir) => execFileSync('rm', ['-rf', dir])));

it.each(dirs)('names where a sparse file holds data, on tmpfs and on the disk (%s)', async (dir) => {
  const path = join(dir, 'sparse.img');
  const fd = openSync(path, 'w+');
  try {
    execFileSync('truncate', ['-s', String(64 * MiB), path]);
    writeSync(fd, Buffer.alloc(MiB, 7), 0, MiB, 8 * MiB);
    writeSync(fd, Buffer.alloc(2 * MiB, 9), 0, 2 * MiB, 40 * MiB);
    expect(await dataRanges(fd, 0, 64 * MiB)).toEqual([
      [8 * MiB, MiB],
      [40 * MiB, 2 * MiB],
    ]);
    // Clipped to what is asked, and nothing where there is none.
    expect(await dataRanges(fd, 8 * MiB + 4096, 41 * MiB)).toEqual([
      [8 * MiB + 4096, MiB - 4096],
      [40 * MiB, MiB],
    ]);
    expect(await dataRanges(fd, 10 * MiB, 40 * MiB)).toEqual([]);
    expect(await dataRanges(fd, 50 * MiB, 64 * MiB)).toEqual([]);
  } finally {
    closeSync(fd);
  }
});
