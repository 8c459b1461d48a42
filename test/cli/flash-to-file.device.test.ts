import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { isFileTarget, isWindowsDevicePath } from '../../cli/target-kind.js';
import { checkFileTargetPath } from '../../user/files/file-target.js';
import { assertTestTarget, collect, flashCli, resultsOf, spawnCli } from '../support/cli.js';
import { servePaced } from '../support/file-server.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, scratchDir, smallTmpfs, writeRandomFile } from '../support/loop-device.js';
import { osImage, sh } from '../support/os-image.js';

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

describeDevices('flash to a regular file', () => {
  it('decodes an xz image into a file equal byte for byte to xz -dc, with no administrator rights needed and nothing left over', async () => {
    const dir = scratchDir();
    osImage(dir, 24 * MiB);
    sh(dir, 'xz -6 -T2 --block-size=3MiB -c os.img > os.img.xz');
    const target = join(dir, 'decoded.img');
    const run = await flashCli(join(dir, 'os.img.xz'), [target]);
    expect(run.code, run.stderr).toBe(0);
    expect(resultsOf(run).get(target)).toMatchObject({ status: 'ok', written: true, verified: true, bytes: 24 * MiB });
    const reference = execFileSync('xz', ['-dc', join(dir, 'os.img.xz')], { maxBuffer: 64 * MiB });
    expect(sha256(readFileSync(target))).toBe(sha256(reference));
    expect(existsSync(`${target}.incomplete`)).toBe(false);
  });

  it('copies a raw image into an identical file (the kernel copy), replacing what was there', async () => {
    const dir = scratchDir();
    const image = join(dir, 'raw.img');
    writeRandomFile(image, 20 * MiB + 4321);
    const target = join(dir, 'copy.img');
    writeFileSync(target, 'an older file of that name');
    const run = await flashCli(image, [target]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(resultsOf(run).get(target)).toMatchObject({ status: 'ok', verified: true, bytes: 20 * MiB + 4321 });
    expect(sha256(readFileSync(target))).toBe(sha256(readFileSync(image)));
  });

  it('writes only a block map’s ranges into a file, leaving holes elsewhere, and the file equals the image', async () => {
    const dir = scratchDir();
    const image = osImage(dir, 24 * MiB);
    execFileSync('bmaptool', ['create', '-o', `${image}.bmap`, image], { stdio: 'ignore' });
    const target = join(dir, 'mapped.img');
    const run = await flashCli(image, [target]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const blockMap = run.events.find((e) => e.type === 'source')?.['blockMap'] as { mappedBytes: number } | undefined;
    expect(blockMap?.mappedBytes).toBeLessThan(24 * MiB);
    expect(resultsOf(run).get(target)).toMatchObject({ status: 'ok', verified: true, bytes: blockMap?.mappedBytes });
    expect(sha256(readFileSync(target))).toBe(sha256(readFileSync(image)));
    // Sparse like the image itself: the unmapped ranges take no space.
    expect(statSync(target).blocks * 512).toBeLessThan(0.8 * 24 * MiB);
  });

  it('keeps nothing, under either name, of a file whose image turns out corrupt', async () => {
    const dir = scratchDir();
    osImage(dir, 16 * MiB);
    sh(
      dir,
      'xz -T1 -c os.img > os.img.xz && printf "\\001\\002\\003" | dd of=os.img.xz bs=1 seek=300000 conv=notrunc status=none',
    );
    const target = join(dir, 'out.img');
    const run = await flashCli(join(dir, 'os.img.xz'), [target]);
    expect(run.code).toBe(1);
    expect(resultsOf(run).get(target)).toMatchObject({ status: 'failed', code: 'source-corrupt' });
    expect(existsSync(target)).toBe(false);
    expect(existsSync(`${target}.incomplete`)).toBe(false);
  });

  /**
   * `sluice flash` of a download paced at 4 MB/s into `target` (the flash cannot end on its own for
   * about 8 s, whatever the load), stopped with Ctrl-C once the incomplete file exists and
   * `beforeCancel` has run.
   */
  async function cancelledDownload(dir: string, target: string, beforeCancel = (): void => undefined) {
    const image = join(dir, 'paced.img');
    writeRandomFile(image, 32 * MiB);
    const server = await servePaced(image, 4_000_000);
    assertTestTarget(target);
    try {
      const child = spawnCli(['flash', '--yes', `${server.base}/paced.img`, target]);
      const done = collect(child);
      // The plain reporter's first phase line comes from the running job, whose Ctrl-C handler is in place.
      await new Promise<void>((resolve) =>
        child.stderr?.on('data', (text: Buffer) => text.toString().includes(`${target}: `) && resolve()),
      );
      expect(existsSync(`${target}.incomplete`)).toBe(true);
      beforeCancel();
      child.kill('SIGINT');
      return await done;
    } finally {
      await server.close();
    }
  }

  it('Ctrl-C says what became of the file, not of a drive: the incomplete file deleted, the older file kept', async () => {
    const dir = scratchDir();
    const target = join(dir, 'out.img');
    writeFileSync(target, 'an older file of that name');
    const run = await cancelledDownload(dir, target);
    expect(run.code, run.stderr).toBe(130);
    expect(run.stdout).toBe(
      `${target}: cancelled. The incomplete file was deleted; a file that already had this name is unchanged.\n`,
    );
    expect(run.stdout).not.toMatch(/drive/i);
    expect(existsSync(`${target}.incomplete`)).toBe(false);
    expect(readFileSync(target, 'utf8')).toBe('an older file of that name');
  });

  it('Ctrl-C that cannot delete the incomplete file says it is still there, and fails rather than cancels', async () => {
    const dir = scratchDir();
    const target = join(dir, 'out.img');
    // An immutable folder: its entries cannot be removed, even by root, as on a disk gone read-only.
    try {
      const run = await cancelledDownload(dir, target, () => execFileSync('chattr', ['+i', dir]));
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toContain(
        `Cancelled. The incomplete file ${target}.incomplete could not be deleted (operation not permitted); delete it by hand.`,
      );
      expect(run.stdout).not.toMatch(/was deleted/);
      expect(existsSync(`${target}.incomplete`)).toBe(true);
    } finally {
      execFileSync('chattr', ['-i', dir]);
    }
  });

  it('says a file that cannot fit does not fit before writing it, and leaves nothing behind', async () => {
    const dir = scratchDir();
    osImage(dir, 24 * MiB);
    sh(dir, 'xz -T1 -c os.img > os.img.xz');
    const full = smallTmpfs(4 * MiB);
    const target = join(full, 'decoded.img');
    const run = await collect(spawnCli(['flash', '--yes', '--json', join(dir, 'os.img.xz'), target]));
    expect(run.code).toBe(1);
    expect(resultsOf(run).get(target)).toMatchObject({
      status: 'failed',
      code: 'target-full',
      message: expect.stringContaining('not enough free space') as unknown,
    });
    expect(readdirSync(full)).toEqual([]);
  });

  it('refuses the image itself as its target, and leaves it untouched', async () => {
    const dir = scratchDir();
    const image = join(dir, 'self.img');
    writeRandomFile(image, 2 * MiB);
    const before = sha256(readFileSync(image));
    const run = await flashCli(image, [image]);
    expect(run.code).toBe(4);
    expect(resultsOf(run).get(image)).toMatchObject({ status: 'failed', code: 'target-is-source' });
    expect(sha256(readFileSync(image))).toBe(before);
  });

  it('sends a path that is or leads to a block device the device route, and never creates a file in /dev', async () => {
    const dir = scratchDir();
    const loop = createLoop({ size: 4 * MiB });
    const link = join(dir, 'card');
    symlinkSync(loop.path, link);
    expect(await isFileTarget(loop.path)).toBe(false);
    expect(await isFileTarget(link)).toBe(false);
    expect(await isFileTarget(join(dir, 'new.img'))).toBe(true);
    // Windows disks are in the device namespace, where nothing exists for lstat to find.
    expect(isWindowsDevicePath('\\\\.\\PhysicalDrive2', 'win32')).toBe(true);
    expect(isWindowsDevicePath('\\\\?\\C:\\Users\\me\\pi.img', 'win32')).toBe(false);
    expect(isWindowsDevicePath('C:\\Users\\me\\pi.img', 'win32')).toBe(false);
    expect(isWindowsDevicePath('\\\\.\\PhysicalDrive2', 'linux')).toBe(false);
    // The file route itself refuses a link (it never follows one) and a missing name in /dev.
    await expect(checkFileTargetPath(link)).rejects.toMatchObject({ failure: { code: 'target-not-block-device' } });
    await expect(checkFileTargetPath('/dev/sluice-no-such-drive')).rejects.toMatchObject({
      failure: { code: 'target-not-found' },
    });
    expect(statSync(loop.path).isBlockDevice()).toBe(true);
  });
});
