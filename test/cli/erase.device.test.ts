import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { GiB, MiB } from '../../common/domain/units.js';
import { collect, spawnCli, type CliRun } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import {
  assertOwnedLoop,
  attachLoop,
  createLoop,
  readBytes,
  scratchDir,
  waitForPath,
  writeRandomFile,
  type LoopDevice,
} from '../support/loop-device.js';

function eraseCli(device: string, flags: string[] = []): Promise<CliRun> {
  assertOwnedLoop(device);
  return collect(spawnCli(['erase', '--yes', '--json', ...flags, device]));
}

/** Bytes written to a block device so far, from its sysfs stat (field 7: sectors written, in 512-byte units). */
function bytesWritten(device: string): number {
  const stat = readFileSync(`/sys/block/${device.replace('/dev/', '')}/stat`, 'utf8')
    .trim()
    .split(/\s+/);
  return Number(stat[6]) * 512;
}

/** The partition the erase made, as the kernel sees it on a second loop device over the same backing file, which scans the new table. */
async function partitionOf(loop: LoopDevice): Promise<string> {
  const scanned = attachLoop(loop.backing, { partitions: true });
  await waitForPath(`${scanned.path}p1`);
  return `${scanned.path}p1`;
}

/** What blkid finds on `partition`: its TYPE and LABEL. */
function identify(partition: string): { type: string; label: string } {
  const tag = (name: string) =>
    execFileSync('blkid', ['-s', name, '-o', 'value', partition], { encoding: 'utf8' }).trim();
  return { type: tag('TYPE'), label: tag('LABEL') };
}

function clean(tool: string, partition: string): void {
  const run = spawnSync(tool, ['-n', partition], { encoding: 'utf8' });
  expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
}

function tenMiB(): { path: string; dir: string } {
  const dir = scratchDir();
  const path = join(dir, 'ten');
  writeRandomFile(path, 10 * MiB);
  return { path, dir };
}

describeDevices('sluice erase', () => {
  it('makes a 256 MiB drive one FAT32 partition with the label, fsck-clean, holding a file intact; the rest untouched', async () => {
    const loop = createLoop({ size: 256 * MiB });
    const untouched = readBytes(loop.backing, 128 * MiB, MiB);
    const run = await eraseCli(loop.path, ['--label', 'Sluice 1']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.events.find((e) => e.type === 'erase')).toMatchObject({
      filesystem: 'fat32',
      label: 'SLUICE 1',
      partitionStart: 4 * MiB,
      partitionBytes: 252 * MiB,
    });
    expect(run.events.find((e) => e.type === 'result')).toMatchObject({ status: 'ok', verified: true });
    expect(readBytes(loop.backing, 128 * MiB, MiB).equals(untouched)).toBe(true);
    // The tables' temporary file is gone with its directory.
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith('sluice-erase-'))).toEqual([]);
    const partition = await partitionOf(loop);
    expect(identify(partition)).toEqual({ type: 'vfat', label: 'SLUICE 1' });
    clean('fsck.fat', partition);
    // This kernel mounts no FAT: mtools reads and writes it as any OS would.
    const file = tenMiB();
    execFileSync('mcopy', ['-i', partition, file.path, '::ten']);
    execFileSync('mcopy', ['-i', partition, '::ten', join(file.dir, 'back')]);
    expect(execFileSync('cmp', [file.path, join(file.dir, 'back')]).length).toBe(0);
    clean('fsck.fat', partition);
  });

  it('makes a 40 GiB drive exFAT, writing under 64 MiB, fsck-clean, mountable, holding a file intact', async () => {
    const loop = createLoop({ size: 40 * GiB, fill: 'sparse' });
    const before = bytesWritten(loop.path);
    const run = await eraseCli(loop.path, ['--label', 'Kärtchen']);
    expect(run.code, run.stderr).toBe(0);
    const written = bytesWritten(loop.path) - before;
    // The tables (9.8 MB) and the first MiB once more: it is blanked first and written last.
    expect(written).toBeLessThan(64 * MiB);
    expect(written).toBeGreaterThan(9 * MiB);
    expect(run.events.find((e) => e.type === 'erase')).toMatchObject({
      filesystem: 'exfat',
      label: 'Kärtchen',
      clusterBytes: 128 * 1024,
    });
    const partition = await partitionOf(loop);
    expect(identify(partition)).toEqual({ type: 'exfat', label: 'Kärtchen' });
    clean('fsck.exfat', partition);
    const file = tenMiB();
    const mountpoint = mkdtempSync('/tmp/sluice-test-exfat-');
    try {
      execFileSync('mount.exfat-fuse', [partition, mountpoint]);
      writeFileSync(join(mountpoint, 'ten'), readFileSync(file.path));
      execFileSync('umount', [mountpoint]);
      execFileSync('mount.exfat-fuse', ['-o', 'ro', partition, mountpoint]);
      expect(readFileSync(join(mountpoint, 'ten')).equals(readFileSync(file.path))).toBe(true);
    } finally {
      spawnSync('umount', [mountpoint]);
      rmSync(mountpoint, { recursive: true, force: true });
    }
    clean('fsck.exfat', partition);
  });

  it('refuses a label the filesystem cannot store, writing nothing', async () => {
    const loop = createLoop({ size: 256 * MiB, fill: 'sparse' });
    const before = bytesWritten(loop.path);
    const run = await eraseCli(loop.path, ['--label', 'far too long a label']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/cannot be a FAT32 label/);
    expect(bytesWritten(loop.path)).toBe(before);
  });
});
