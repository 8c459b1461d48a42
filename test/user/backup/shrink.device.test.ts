/**
 * `sluice backup --shrink`: a 2 GiB drive whose ext4 root fills it (as after an OS's first boot)
 * is saved shrunk, restores onto a 1 GiB loop device, and its filesystems there pass fsck and hold
 * the same files as the drive's.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { GiB, MiB } from '../../../common/domain/units.js';
import { backupCli, flashCli, resultsOf } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import { checkedTrees, treeDifferences } from '../../support/file-trees.js';
import { attachLoop, createLoop, scratchDir } from '../../support/loop-device.js';
import { osImage } from '../../support/os-image.js';

const DRIVE = 2 * GiB;

describeDevices('a backup shrunk to what it holds', () => {
  it.each(['gpt', 'mbr'] as const)(
    '%s: restores onto a 1 GiB drive, where fsck passes and the files are the same',
    async (table) => {
      const dir = scratchDir('/var/tmp');
      // The root partition runs to the drive's end, as an OS grows it on its first boot.
      const drive = attachLoop(osImage(dir, DRIVE, 'drive.img', { fat32: true, table }));
      const file = join(dir, 'shrunk.img');
      const run = await backupCli(drive.path, file, ['--shrink']);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const saved = resultsOf(run).get(file);
      expect(saved).toMatchObject({ status: 'ok', verified: true });
      const bytes = saved?.bytes ?? 0;
      expect(statSync(file).size).toBe(bytes);
      expect(bytes).toBeLessThan(GiB);
      // The end of the job says what it was shrunk from and what the file takes.
      expect((saved as { backup?: object } | undefined)?.backup).toMatchObject({
        driveBytes: DRIVE,
        shrunkFrom: DRIVE,
        fileBytes: statSync(file).blocks * 512,
      });

      // Random bytes under the restore: a range the block map wrongly leaves out is garbage, not zeros.
      const small = createLoop({ size: GiB, fill: 'random', dir });
      const back = await flashCli(file, [small.path], ['--no-eject']);
      expect(back.code, back.stdout + back.stderr).toBe(0);
      const original = checkedTrees(drive.backing, join(dir, 'original'));
      const restored = checkedTrees(small.backing, join(dir, 'restored'));
      expect(restored).toHaveLength(2);
      expect(original).toHaveLength(2);
      for (const [i, tree] of original.entries()) expect(treeDifferences(tree, restored[i] ?? '')).toBe('');
      // The block map made after shrinking leaves the shrunk root's free space out.
      expect(statSync(file).blocks * 512).toBeLessThan(64 * MiB);
    },
    240_000,
  );
});
