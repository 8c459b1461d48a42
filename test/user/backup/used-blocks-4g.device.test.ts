/**
 * The acceptance backup: a 4 GiB drive holding the benchmark's 1 GiB OS-like image, its root grown
 * to the drive's end as after a first boot. The backup reads at most the used bytes plus the
 * metadata plus 5% (counted by the loop device's sysfs stat), and flashed onto another 4 GiB
 * drive gives filesystems that fsck passes with the same file trees. Its timing against a whole
 * backup is the benchmark's (BENCH_SECTIONS=backup npm run bench).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { GiB, MiB } from '../../../common/domain/units.js';
import { osLikeImage } from '../../bench/os-like-image.js';
import { backupCli, flashCli, resultsOf } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import { checkedTrees, treeDifferences } from '../../support/file-trees.js';
import { grownDrive } from '../../support/grown-drive.js';
import { bytesReadFrom, createLoop, scratchDir } from '../../support/loop-device.js';

const DRIVE = 4 * GiB;
const FIXTURES = process.env['BENCH_FIXTURES'] ?? '/var/tmp/sluice-bench-fixtures';

/** Bytes the filesystems of `drive` use, as df counts them: FAT's used clusters, ext's used blocks. */
function usedBytes(drive: string): number {
  let used = 0;
  const table = JSON.parse(execFileSync('sfdisk', ['--json', drive], { encoding: 'utf8' })) as {
    partitiontable: { partitions: { node: string }[] };
  };
  for (const { node } of table.partitiontable.partitions) {
    const type = execFileSync('blkid', ['-p', '-o', 'value', '-s', 'TYPE', node], { encoding: 'utf8' }).trim();
    if (type.startsWith('ext')) {
      const header = execFileSync('dumpe2fs', ['-h', node], { encoding: 'utf8', stdio: 'pipe' });
      const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)$`, 'm').exec(header)?.[1]);
      used += (field('Block count') - field('Free blocks')) * field('Block size');
    } else if (type === 'vfat') {
      const said = execFileSync('fsck.fat', ['-n', '-v', node], { encoding: 'utf8' });
      const clusters = Number(/(\d+)\/\d+ clusters/.exec(said)?.[1]);
      used += clusters * Number(/(\d+) bytes per cluster/.exec(said)?.[1]);
    }
  }
  return used;
}

describeDevices('a backup of a 4 GiB drive holding the 1 GiB OS-like image', () => {
  it('reads the used bytes, the metadata and at most 5% more, and restores to clean filesystems with the same files', async () => {
    const dir = scratchDir('/var/tmp');
    const drive = grownDrive(osLikeImage(FIXTURES), DRIVE, dir);
    const used = usedBytes(drive.path);
    const file = join(dir, 'backup.img');

    const before = bytesReadFrom(drive.path);
    const run = await backupCli(drive.path, file);
    const read = bytesReadFrom(drive.path) - before;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(resultsOf(run).get(file)).toMatchObject({ status: 'ok', verified: true, bytes: DRIVE });
    // Metadata: the first MiB and the GPT's last 33 sectors, the FATs, ext's descriptors, bitmaps and journal.
    expect(read, `read ${read} bytes of ${DRIVE}; the filesystems use ${used}`).toBeLessThanOrEqual(
      used * 1.05 + 8 * MiB,
    );
    console.log(
      `4 GiB drive: read ${(read / MiB).toFixed(0)} MiB, used ${(used / MiB).toFixed(0)} MiB (${(read / used).toFixed(3)}×)`,
    );

    const copy = createLoop({ size: DRIVE, fill: 'sparse', dir });
    const back = await flashCli(file, [copy.path], ['--no-eject']);
    expect(back.code, back.stdout + back.stderr).toBe(0);
    const original = checkedTrees(drive.backing, join(dir, 'original'));
    const restored = checkedTrees(copy.backing, join(dir, 'restored'));
    expect(original).toHaveLength(2);
    expect(restored).toHaveLength(2);
    for (const [i, tree] of original.entries()) expect(treeDifferences(tree, restored[i] ?? '')).toBe('');
  }, 600_000);
});
