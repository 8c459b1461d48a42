/**
 * The file trees of a disk's filesystems, checked: each ext2/3/4 and FAT partition (as sfdisk reads
 * the table) passes fsck and is copied out with the filesystem tools themselves (debugfs rdump,
 * mcopy), never through Sluice's readers, so that two disks' trees can be compared file by file.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** Each partition's filesystem type (blkid's word) and byte offset. */
function filesystems(disk: string): { type: string; offset: number; size: number }[] {
  const table = JSON.parse(execFileSync('sfdisk', ['--json', disk], { encoding: 'utf8' })) as {
    partitiontable: { sectorsize?: number; partitions: { start: number; size: number }[] };
  };
  const sector = table.partitiontable.sectorsize ?? 512;
  return table.partitiontable.partitions.map(({ start, size }) => {
    const offset = start * sector;
    const type = execFileSync('blkid', ['-p', '-o', 'value', '-s', 'TYPE', '-O', String(offset), disk], {
      encoding: 'utf8',
    }).trim();
    return { type, offset, size: size * sector };
  });
}

/**
 * Runs fsck on each ext and FAT filesystem of `disk` (a file), throwing with its output when one is
 * not clean, and copies each one's files into a directory under `scratch`: the directories, in
 * partition order.
 */
export function checkedTrees(disk: string, scratch: string): string[] {
  const trees: string[] = [];
  for (const [index, { type, offset, size }] of filesystems(disk).entries()) {
    const tree = join(scratch, `tree-${index}`);
    mkdirSync(tree, { recursive: true });
    if (type.startsWith('ext')) {
      const at = `${disk}?offset=${offset}`;
      execFileSync('e2fsck', ['-fn', at], { stdio: 'pipe' });
      execFileSync('debugfs', ['-R', `rdump / ${tree}`, at], { stdio: 'pipe' });
    } else if (type === 'vfat') {
      const part = join(scratch, `part-${index}`);
      execFileSync('dd', [
        `if=${disk}`,
        `of=${part}`,
        'bs=1M',
        'iflag=skip_bytes,count_bytes',
        `skip=${offset}`,
        `count=${size}`,
        'status=none',
      ]);
      execFileSync('fsck.fat', ['-n', part], { stdio: 'pipe' });
      execFileSync('mcopy', ['-s', '-n', '-i', part, '::/', tree], { stdio: 'pipe' });
    } else continue;
    trees.push(tree);
  }
  return trees;
}

/** Where two trees differ (diff -r's words), or '' when every file and directory is the same. */
export function treeDifferences(a: string, b: string): string {
  try {
    execFileSync('diff', ['-r', '--no-dereference', a, b], { stdio: 'pipe' });
    return '';
  } catch (error) {
    return String((error as { stdout?: Buffer }).stdout ?? error);
  }
}
