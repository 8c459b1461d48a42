import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { extentBytes, intersectExtents } from '../../../common/domain/extents.js';
import { MiB } from '../../../common/domain/units.js';
import { backupCli, flashCli, resultsOf } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import { bytesReadFrom, createLoop, scratchDir } from '../../support/loop-device.js';
import { differencesOutside, fsckPartitions, imageFreeSpace } from '../../support/free-space.js';
import { osImage, osImageLayout } from '../../support/os-image.js';

const IMAGE = 96 * MiB;
const DRIVE = 256 * MiB;
const OPTIONS = { fat32: true, rawPartition: 8 * MiB } as const;

/** A drive that held other data before (random bytes), then had the OS-like image flashed onto it. */
function usedDrive(image: string) {
  const drive = createLoop({ size: DRIVE });
  const bytes = readFileSync(image);
  const fd = openSync(drive.backing, 'r+');
  writeSync(fd, bytes, 0, bytes.length, 0);
  closeSync(fd);
  return drive;
}

describeDevices('a backup of the used blocks', () => {
  it('reads the used blocks, the tables and an unknown partition only, and flashes back to clean filesystems identical outside their free space', async () => {
    const dir = scratchDir();
    const image = osImage(dir, IMAGE, 'os.img', OPTIONS);
    const free = await imageFreeSpace(image, dir);
    const drive = usedDrive(image);
    const file = join(scratchDir(), 'backup.img');

    // Trimmed to the partitions: what lies past them is not the backup's.
    const before = bytesReadFrom(drive.path);
    const run = await backupCli(drive.path, file, ['--trim-to-partitions']);
    const read = bytesReadFrom(drive.path) - before;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const layout = osImageLayout(IMAGE, OPTIONS);
    const raw = layout.raw ?? [0, 0];
    const end = raw[0] + raw[1];
    expect(resultsOf(run).get(file)).toMatchObject({ status: 'ok', verified: true, bytes: end });

    // Used: the image's bytes outside its filesystems' free space, up to the last partition's end.
    const used = end - extentBytes(intersectExtents(free, [[0, end]]));
    // Metadata read to find the free space: the first MiB, the two FATs, ext's descriptors and bitmaps.
    expect(read, `read ${read} bytes, used ${used}`).toBeLessThanOrEqual(used * 1.05 + 2 * MiB);
    expect(statSync(file).size).toBe(end);
    expect(statSync(file).blocks * 512).toBeLessThan(used * 1.1);
    // The end of the job gives the bytes read of the drive's size, and the file's size on disk.
    const figures = (resultsOf(run).get(file) as { backup?: { readBytes: number; fileBytes: number } }).backup;
    expect(figures).toMatchObject({ driveBytes: DRIVE, fileBytes: statSync(file).blocks * 512 });
    expect(figures?.readBytes).toBeGreaterThanOrEqual(used);
    expect(figures?.readBytes).toBeLessThanOrEqual(read);

    const original = readFileSync(drive.backing).subarray(0, end);
    const check = (disk: string) => {
      const copied = readFileSync(disk).subarray(0, end);
      expect(differencesOutside(copied, original, free)).toEqual([]);
      expect(copied.subarray(raw[0], raw[0] + raw[1]).equals(original.subarray(raw[0], raw[0] + raw[1]))).toBe(true);
      fsckPartitions(disk, image, dir);
    };

    // Sluice flashes it back with the block map beside it.
    const copy = createLoop({ size: DRIVE });
    const back = await flashCli(file, [copy.path], ['--no-eject']);
    expect(back.code, back.stderr).toBe(0);
    check(copy.backing);

    // bmaptool takes the same map.
    const target = join(dir, 'bmaptool.img');
    execFileSync('bmaptool', ['copy', '--bmap', `${file}.bmap`, file, target], { stdio: 'pipe' });
    check(target);
  });

  it('reads what lies past the last partition whole unless asked to trim, and it comes back byte for byte', async () => {
    const dir = scratchDir();
    const image = osImage(dir, IMAGE, 'os.img', OPTIONS);
    const free = await imageFreeSpace(image, dir);
    const drive = usedDrive(image);
    const file = join(scratchDir(), 'whole-tail.img');

    const before = bytesReadFrom(drive.path);
    const run = await backupCli(drive.path, file);
    const read = bytesReadFrom(drive.path) - before;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(resultsOf(run).get(file)).toMatchObject({ status: 'ok', verified: true, bytes: DRIVE });
    const used = DRIVE - extentBytes(intersectExtents(free, [[0, IMAGE]]));
    expect(read).toBeGreaterThanOrEqual(DRIVE - IMAGE);
    expect(read, `read ${read} bytes, used ${used}`).toBeLessThanOrEqual(used * 1.05 + 2 * MiB);

    const copy = createLoop({ size: DRIVE });
    const back = await flashCli(file, [copy.path], ['--no-eject']);
    expect(back.code, back.stderr).toBe(0);
    const tail = (disk: string) => readFileSync(disk).subarray(IMAGE);
    expect(tail(copy.backing).equals(tail(drive.backing))).toBe(true);
  });
});
