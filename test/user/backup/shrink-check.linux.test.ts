import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { shrinkCheck } from '../../../user/backup/shrink.js';
import { scratchDir } from '../../support/loop-device.js';

const MiB = 1024 * 1024;
const dir = scratchDir();
afterAll(() => execFileSync('rm', ['-rf', dir]));

const LINUX = '0FC63DAF-8483-4772-8E79-3D69D8477DE4';
/** A 48 MiB GPT image whose one partition (1 MiB on, 32 MiB) holds ext4 of 8192 blocks of 4 KiB. */
function image(name: string): string {
  const path = join(dir, name);
  execFileSync('truncate', ['-s', String(48 * MiB), path]);
  execFileSync('sfdisk', ['--quiet', path], { input: `label: gpt\nstart=2048, size=65536, type=${LINUX}\n` });
  execFileSync('mkfs.ext4', ['-q', '-F', '-b', '4096', '-E', `offset=${MiB}`, path, '8192'], { stdio: 'pipe' });
  return path;
}
const expected = {
  partitions: [{ node: '', start: 2048, size: 65536, type: LINUX }],
  kind: 'ext' as const,
  blocks: 8192,
};

it('passes a file whose table and last filesystem read back as intended', async () => {
  expect(await shrinkCheck(image('good.img'), expected)).toBeNull();
});

it('names a partition table that is not the one intended', async () => {
  const fault = await shrinkCheck(image('table.img'), {
    ...expected,
    partitions: [{ ...expected.partitions[0]!, size: 60000 }],
  });
  expect(fault).toMatch(/partition table reads back as 2048\+65536:.* not 2048\+60000:/);
});

it('names a filesystem of another size, one that is not there, and one e2fsck finds errors in', async () => {
  expect(await shrinkCheck(image('size.img'), { ...expected, blocks: 9000 })).toMatch(/8192 blocks, not 9000/);
  const gone = image('gone.img');
  execFileSync('dd', ['if=/dev/zero', `of=${gone}`, 'bs=1M', 'seek=1', 'count=1', 'conv=notrunc', 'status=none']);
  expect(await shrinkCheck(gone, expected)).toMatch(/no ext2\/3\/4 filesystem reads back/);
  const broken = image('broken.img');
  // The root directory's inode cleared, in a copy of the partition put back in place.
  const part = join(dir, 'part.img');
  execFileSync('dd', [`if=${broken}`, `of=${part}`, 'bs=1M', 'skip=1', 'count=32', 'status=none']);
  execFileSync('debugfs', ['-w', '-R', 'clri <2>', part], { stdio: 'pipe' });
  execFileSync('dd', [`if=${part}`, `of=${broken}`, 'bs=1M', 'seek=1', 'conv=notrunc', 'status=none']);
  expect(await shrinkCheck(broken, expected)).toMatch(/e2fsck finds errors/);
});
