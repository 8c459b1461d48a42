import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeExtents, type Extent } from '../../../../common/domain/extents.js';
import { MiB } from '../../../../common/domain/units.js';
import { extFree, extSuperblock } from '../../../../user/images/free-space/ext.js';
import { randomAccess, StreamedImage } from '../../../../user/images/free-space/image-reader.js';
import { writeRandomFile } from '../../../support/loop-device.js';
import { dumpe2fsFree } from '../../../support/free-space.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-ext-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A small tree for mkfs -d: text, a random blob, nested directories. */
function tree(): string {
  const root = join(dir, 'tree');
  mkdirSync(join(root, 'etc', 'deep', 'deeper'), { recursive: true });
  writeFileSync(join(root, 'etc', 'motd'), 'hello\n'.repeat(5000));
  writeFileSync(join(root, 'etc', 'deep', 'deeper', 'small'), 'x');
  writeRandomFile(join(root, 'blob.bin'), 5 * MiB);
  return root;
}

function mkfs(name: string, size: number, args: string[]): string {
  const path = join(dir, name);
  execFileSync('truncate', ['-s', String(size), path]);
  execFileSync('mkfs.ext4', ['-q', '-F', ...args, '-d', tree(), path], { stdio: ['ignore', 'ignore', 'pipe'] });
  return path;
}

/** e2freefrag's count of free blocks, in bytes. */
function e2freefragBytes(path: string): number {
  const out = execFileSync('e2freefrag', [path], { encoding: 'utf8' });
  const blockSize = Number(/Blocksize: (\d+) bytes/.exec(out)?.[1]);
  return Number(/Free blocks: (\d+)/.exec(out)?.[1]) * blockSize;
}

async function ourFree(path: string, streamed: boolean): Promise<{ filesystem: string; free: Extent[] }> {
  const bytes = readFileSync(path);
  const sb = extSuperblock(bytes.subarray(0, 2048), bytes.length);
  if (sb === null) throw new Error('no superblock');
  const found: Extent[] = [];
  const collect = (extents: Extent[]) => found.push(...extents);
  if (!streamed) {
    await extFree(
      randomAccess((offset, length) => Promise.resolve(bytes.subarray(offset, offset + length))),
      0,
      sb,
      collect,
    );
  } else {
    // Fed in 1 MiB chunks, as a decoder would: only what lies ahead can be read, and every free
    // range must be known before the stream reaches it (nothing of the chunk being fed has left).
    const stream = new StreamedImage();
    let fed = 0;
    const ahead = (extents: Extent[]) => {
      for (const [offset] of extents)
        if (offset < fed) throw new Error(`free range at ${offset} found only after the stream reached ${fed}`);
      collect(extents);
    };
    const reading = extFree(stream.read, 0, sb, ahead).finally(() => stream.done());
    for (; fed < bytes.length && !stream.idle; fed += MiB) await stream.feed(bytes.subarray(fed, fed + MiB), fed);
    stream.end();
    await reading;
  }
  return { filesystem: sb.filesystem, free: mergeExtents(found) };
}

const variants: [string, number, string[], string][] = [
  ['ext4 defaults (flex_bg, metadata_csum, BLOCK_UNINIT groups)', 1024 * MiB, [], 'ext4'],
  ['ext4 -O ^flex_bg', 512 * MiB, ['-O', '^flex_bg'], 'ext4'],
  ['ext4 lazy_itable_init=1', 1024 * MiB, ['-E', 'lazy_itable_init=1'], 'ext4'],
  ['ext4 with gdt_csum (uninit_bg), not metadata_csum', 512 * MiB, ['-O', '^metadata_csum,uninit_bg'], 'ext4'],
  ['ext4, 1 KiB blocks, 64 groups', 512 * MiB, ['-b', '1024'], 'ext4'],
  ['ext4 -O sparse_super2', 1024 * MiB, ['-O', 'sparse_super2'], 'ext4'],
  ['ext4 -O ^64bit,^sparse_super,^resize_inode', 512 * MiB, ['-O', '^64bit,^sparse_super,^resize_inode'], 'ext4'],
  ['ext4 -G 4 (small flex groups)', 768 * MiB, ['-G', '4'], 'ext4'],
  ['ext3', 512 * MiB, ['-t', 'ext3'], 'ext3'],
  ['ext2', 512 * MiB, ['-t', 'ext2'], 'ext2'],
];

describe('ext2/3/4 free blocks: exactly what dumpe2fs and e2freefrag say', () => {
  variants.forEach(([title, size, args, filesystem], i) => {
    it(title, async () => {
      const path = mkfs(`fs${i}.img`, size, args);
      const expected = mergeExtents(dumpe2fsFree(path));
      const random = await ourFree(path, false);
      expect(random.filesystem).toBe(filesystem);
      expect(random.free).toEqual(expected);
      expect(random.free.reduce((sum, [, length]) => sum + length, 0)).toBe(e2freefragBytes(path));
      // A stream finds the same, each group's before the stream reaches it: the bitmaps come first.
      expect((await ourFree(path, true)).free).toEqual(expected);
    });
  });
});

describe('ext filesystems this reader does not understand get no free space', () => {
  const superblockOf = (path: string) => readFileSync(path).subarray(0, 2048);
  it('bigalloc (a bitmap bit per cluster) and meta_bg (descriptors spread out)', () => {
    expect(
      extSuperblock(superblockOf(mkfs('bigalloc.img', 256 * MiB, ['-O', 'bigalloc', '-C', '65536'])), 256 * MiB),
    ).toBeNull();
    expect(
      extSuperblock(superblockOf(mkfs('meta_bg.img', 256 * MiB, ['-O', 'meta_bg,^resize_inode'])), 256 * MiB),
    ).toBeNull();
  });

  it('a journal waiting for recovery, a filesystem not cleanly unmounted, or one with errors', () => {
    const path = mkfs('state.img', 256 * MiB, []);
    expect(extSuperblock(superblockOf(path), 256 * MiB)).not.toBeNull();
    for (const command of ['feature needs_recovery', 'ssv state 0', 'ssv state 3']) {
      const copy = join(dir, 'state-copy.img');
      execFileSync('cp', [path, copy]);
      execFileSync('debugfs', ['-w', '-R', command, copy], { stdio: 'ignore' });
      expect(extSuperblock(superblockOf(copy), 256 * MiB), command).toBeNull();
    }
  });

  it('a filesystem larger than its partition', () => {
    expect(extSuperblock(superblockOf(mkfs('large.img', 256 * MiB, [])), 255 * MiB)).toBeNull();
  });
});
