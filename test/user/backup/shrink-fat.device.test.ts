/**
 * `sluice backup --shrink` on a drive whose last partition is FAT: a GPT drive ending in FAT32 and
 * an MBR drive ending in FAT16, both holding files, are saved shrunk, restore onto smaller loop
 * devices, and there fsck.fat passes and the file trees (copied out with mcopy) are the drive's. A
 * FAT whose used clusters reach its end is kept at full size, and the result says why.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { backupCli, flashCli, resultsOf } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import { checkedTrees, treeDifferences } from '../../support/file-trees.js';
import { attachLoop, createLoop, scratchDir, writeRandomFile } from '../../support/loop-device.js';

const ESP = 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B';
const DATA = 'EBD0A0A2-B9E5-4433-87C0-68B6B72699C7';

/** A `size` drive image partitioned by `script`, each partition `fats[i]` made with mkfs.fat's `-F` bits. */
function fatDrive(dir: string, size: number, script: string, fats: readonly number[]): string {
  const image = join(dir, 'drive.img');
  writeRandomFile(image, size);
  execFileSync('sfdisk', ['-q', image], { input: script });
  const table = JSON.parse(execFileSync('sfdisk', ['--json', image], { encoding: 'utf8' })) as {
    partitiontable: { partitions: { start: number; size: number }[] };
  };
  for (const [i, { start, size: sectors }] of table.partitiontable.partitions.entries()) {
    const part = join(dir, `part-${i}`);
    execFileSync('truncate', ['-s', String(sectors * 512), part]);
    execFileSync('mkfs.fat', ['-F', String(fats[i]), '-n', `PART${i}`, part], { stdio: 'ignore' });
    fill(dir, part, i);
    execFileSync('dd', [
      `if=${part}`,
      `of=${image}`,
      'bs=1M',
      `seek=${start * 512}`,
      'oflag=seek_bytes',
      'conv=notrunc',
      'status=none',
    ]);
  }
  return image;
}

/** Files of several sizes in nested folders, copied in with mcopy. */
function fill(dir: string, part: string, index: number): void {
  const tree = join(dir, `src-${index}`);
  mkdirSync(join(tree, 'overlays', 'deep'), { recursive: true });
  writeRandomFile(join(tree, 'kernel.img'), 9 * MiB + 123);
  writeRandomFile(join(tree, 'overlays', 'deep', 'blob.bin'), 3 * MiB + 7);
  for (let i = 0; i < 40; i++) writeFileSync(join(tree, 'overlays', `o${i}.dtbo`), `overlay ${i}\n`.repeat(i + 1));
  writeFileSync(join(tree, 'config.txt'), 'arm_64bit=1\n');
  execFileSync('mcopy', [
    '-s',
    '-i',
    part,
    join(tree, 'kernel.img'),
    join(tree, 'overlays'),
    join(tree, 'config.txt'),
    '::/',
  ]);
}

/** blkid's VERSION (FAT16, FAT32) of the last partition of the disk file `disk`. */
function lastFatVersion(disk: string): string {
  const table = JSON.parse(execFileSync('sfdisk', ['--json', disk], { encoding: 'utf8' })) as {
    partitiontable: { partitions: { start: number }[] };
  };
  const offset = (table.partitiontable.partitions.at(-1)?.start ?? 0) * 512;
  return execFileSync('blkid', ['-p', '-o', 'value', '-s', 'VERSION', '-O', String(offset), disk], {
    encoding: 'utf8',
  }).trim();
}

const CASES = [
  {
    name: 'GPT drive ending in FAT32',
    size: 640 * MiB,
    script: `label: gpt\nstart=2048, size=64MiB, type=${ESP}\nstart=133120, type=${DATA}\n`,
    fats: [16, 32],
    version: 'FAT32',
    // FAT32 of 4 KiB clusters needs 65,525 of them, which with its FATs take 258 MiB: 1 + 64 + 258,
    // and the GPT's backup header in the last MiB.
    shrunk: 324 * MiB,
    smaller: 384 * MiB,
  },
  {
    name: 'MBR drive ending in FAT16',
    size: 512 * MiB,
    script: 'label: dos\nstart=2048, size=32MiB, type=c\nstart=67584, type=e\n',
    fats: [16, 16],
    version: 'FAT16',
    // 1 + 32 MiB, and the FAT16's files and FATs with the 64 MiB margin, in whole MiB: 77 MiB.
    shrunk: 110 * MiB,
    smaller: 160 * MiB,
  },
] as const;

describeDevices('a backup whose last partition is FAT, shrunk', () => {
  it.each(CASES)(
    '$name: restores onto a smaller drive, where fsck.fat passes and the files are the same',
    async ({ size, script, fats, version, shrunk, smaller }) => {
      const dir = scratchDir('/var/tmp');
      const drive = attachLoop(fatDrive(dir, size, script, fats));
      const file = join(dir, 'shrunk.img');
      const run = await backupCli(drive.path, file, ['--shrink']);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const saved = resultsOf(run).get(file) as { bytes: number; warnings?: string[]; backup?: object } | undefined;
      expect(saved).toMatchObject({ status: 'ok', verified: true, backup: { shrunkFrom: size } });
      expect(saved?.warnings ?? []).toEqual([]);
      expect(statSync(file).size).toBe(saved?.bytes);
      expect(saved?.bytes).toBe(shrunk);
      expect(existsSync(`${file}.bmap`)).toBe(true);
      expect(lastFatVersion(file)).toBe(version);

      const card = createLoop({ size: smaller, fill: 'random', dir });
      const back = await flashCli(file, [card.path], ['--no-eject']);
      expect(back.code, back.stdout + back.stderr).toBe(0);
      expect(lastFatVersion(card.backing)).toBe(version);
      const original = checkedTrees(drive.backing, join(dir, 'original'));
      const restored = checkedTrees(card.backing, join(dir, 'restored'));
      expect(original).toHaveLength(2);
      expect(restored).toHaveLength(2);
      for (const [i, tree] of original.entries()) expect(treeDifferences(tree, restored[i] ?? '')).toBe('');
    },
    240_000,
  );

  it('a FAT whose used clusters reach its end is kept at full size, and the result says why', async () => {
    const dir = scratchDir('/var/tmp');
    const size = 256 * MiB;
    const image = fatDrive(dir, size, 'label: dos\nstart=2048, type=e\n', [16]);
    // A file written after one that nearly fills the filesystem, which is then deleted: the
    // filesystem holds little, but its last used clusters lie near its end.
    const at = `${image}@@1M`;
    writeRandomFile(join(dir, 'big.bin'), 200 * MiB);
    writeFileSync(join(dir, 'late.txt'), 'written last\n');
    execFileSync('mcopy', ['-i', at, join(dir, 'big.bin'), join(dir, 'late.txt'), '::/']);
    execFileSync('mdel', ['-i', at, '::/big.bin']);
    const drive = attachLoop(image);
    const file = join(dir, 'kept.img');
    const run = await backupCli(drive.path, file, ['--shrink']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const saved = resultsOf(run).get(file) as { bytes: number; warnings?: string[] } | undefined;
    expect(saved).toMatchObject({ status: 'ok', bytes: size });
    expect(saved?.warnings?.join(' ')).toMatch(
      /Not shrunk: The last partition of .* was not shrunk: its FAT16 uses clusters up to \d+ MiB of its 255 MiB, .*moving none; the backup is kept as it is\./,
    );
    expect(statSync(file).size).toBe(size);
    expect(existsSync(`${file}.bmap`)).toBe(true);
  }, 120_000);
});
