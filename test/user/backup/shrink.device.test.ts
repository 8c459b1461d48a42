/**
 * `sluice backup --shrink`: a 2 GiB drive whose ext4 root fills it (as after an OS's first boot)
 * is saved shrunk, restores onto a 1 GiB loop device, and its filesystems there pass fsck and hold
 * the same files as the drive's. Restored again with --grow-root, the card holds the first-boot
 * step that grows the root back: a firstrun.sh step (GPT drive, Raspberry Pi OS's boot files) or
 * cloud-init's growpart (MBR drive, a NoCloud seed).
 */
import { execFileSync } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { GiB, MiB } from '../../../common/domain/units.js';
import { backupCli, flashCli, resultsOf } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import { checkedTrees, treeDifferences } from '../../support/file-trees.js';
import { attachLoop, createLoop, scratchDir } from '../../support/loop-device.js';
import { osImage, osImageLayout } from '../../support/os-image.js';
import { checkShellScript, cloudInitSchemaProblem } from '../../support/customisation.js';
import { parse } from 'yaml';

const DRIVE = 2 * GiB;

/** The boot partition's files that make the drive's image one for `method` (user/customise/detect.ts). */
function addBootFiles(image: string, dir: string, table: 'gpt' | 'mbr'): void {
  const at = `${image}@@${osImageLayout(DRIVE, { fat32: true, table }).boot[0]}`;
  const files: Record<string, string> =
    table === 'gpt'
      ? { 'cmdline.txt': 'console=tty1 root=PARTUUID=abc-02 rootwait\n' }
      : { 'user-data': '#cloud-config\n{}\n', 'meta-data': 'instance-id: drive\n' };
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(dir, name), text);
    execFileSync('mcopy', ['-i', at, join(dir, name), `::/${name}`]);
  }
}

/** A file of the boot partition of the card `backing`, read with mtools. */
function cardFile(backing: string, table: 'gpt' | 'mbr', name: string): string {
  const at = `${backing}@@${osImageLayout(DRIVE, { fat32: true, table }).boot[0]}`;
  return execFileSync('mtype', ['-i', at, `::/${name}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
}

describeDevices('a backup shrunk to what it holds', () => {
  it.each(['gpt', 'mbr'] as const)(
    '%s: restores onto a 1 GiB drive, where fsck passes and the files are the same',
    async (table) => {
      const dir = scratchDir('/var/tmp');
      // The root partition runs to the drive's end, as an OS grows it on its first boot.
      const image = osImage(dir, DRIVE, 'drive.img', { fat32: true, table });
      addBootFiles(image, dir, table);
      const drive = attachLoop(image);
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

      const grown = await flashCli(file, [small.path], ['--no-eject', '--grow-root']);
      expect(grown.code, grown.stdout + grown.stderr).toBe(0);
      if (table === 'gpt') {
        const script = cardFile(small.backing, table, 'firstrun.sh');
        expect(script).toMatch(/# grow-root\n\(\nset -e\n.*growpart "\$ROOT_DISK" "\$PART_NUM"/s);
        expect(script).toContain('resize2fs "$ROOT_PART"');
        expect(checkShellScript(dir, script)).toEqual([]);
        expect(cardFile(small.backing, table, 'cmdline.txt')).toContain('systemd.run=');
      } else {
        const userData = cardFile(small.backing, table, 'user-data');
        expect(parse(userData)).toMatchObject({ growpart: { mode: 'auto', devices: ['/'] }, resize_rootfs: true });
        expect(cloudInitSchemaProblem(dir, userData)).toBeNull();
      }
    },
    240_000,
  );
});
