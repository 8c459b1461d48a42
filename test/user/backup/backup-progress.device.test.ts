import { statSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { expect, it } from 'vitest';
import { ProgressSchema, type Progress } from '../../../common/domain/progress.js';
import type { BackupFigures } from '../../../common/domain/result.js';
import { formatBytes, MiB } from '../../../common/domain/units.js';
import { assertTestTarget, backupCli, collect, resultsOf, spawnCli, type CliRun } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import { assertOwnedLoop, attachLoop, bytesReadFrom, scratchDir } from '../../support/loop-device.js';
import { osImage } from '../../support/os-image.js';
import { throttledGroup } from '../../support/throttle.js';

const DRIVE = 256 * MiB;
/** Reads slow enough for a few seconds of progress reports (4 a second) over the used blocks. */
const READ_BYTES_PER_SECOND = 16_000_000;

/** The --json run's progress reports, each checked against the schema the app's boundary checks too. */
function progressOf(run: CliRun): Progress[] {
  return run.events.filter((e) => e.type === 'progress').map(({ type: _type, ...p }) => v.parse(ProgressSchema, p));
}

function figuresOf(run: CliRun, file: string): BackupFigures {
  const result = resultsOf(run).get(file);
  expect(result, run.stdout + run.stderr).toMatchObject({ status: 'ok' });
  return (result as unknown as { backup: BackupFigures }).backup;
}

/** Each phase's reports count up, never down, from the first to the last. */
function expectCountsUp(reports: readonly Progress[]): void {
  for (let i = 1; i < reports.length; i++)
    expect(reports[i]?.bytesDone ?? 0).toBeGreaterThanOrEqual(reports[i - 1]?.bytesDone ?? 0);
}

describeDevices("a backup's progress and end", () => {
  it('counts the bytes read from the drive up to exactly what it read (the drive counted by sysfs), against the drive, and ends with the file as it is on disk', async () => {
    const dir = scratchDir();
    // The OS-like image's FAT and ext4 partitions hold files; the rest of the drive is unused.
    const drive = attachLoop(osImage(dir, DRIVE, 'drive.img', { fat32: true }));
    const file = join(scratchDir(), 'card.img');
    const group = throttledGroup(drive.path, READ_BYTES_PER_SECOND, 'read');
    let run: CliRun;
    let read: number;
    try {
      const before = bytesReadFrom(drive.path);
      run = await backupCli(drive.path, file, [], { cgroup: group.dir });
      read = bytesReadFrom(drive.path) - before;
    } finally {
      group.remove();
    }
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const figures = figuresOf(run, file);
    const progress = progressOf(run);
    expect(new Set(progress.map((p) => p.phase))).toEqual(new Set(['reading', 'syncing', 'verifying']));
    for (const p of progress) expect(p.backup).toEqual({ driveBytes: DRIVE, imageBytes: DRIVE });

    const reading = progress.filter((p) => p.phase === 'reading');
    expect(reading.length, 'a few seconds of reading, 4 reports a second').toBeGreaterThanOrEqual(4);
    expectCountsUp(reading);
    // The tables and maps read to find the used blocks count as read from the first report.
    expect(figures.mapBytes).toBeGreaterThan(0);
    expect(reading[0]?.bytesDone).toBeGreaterThanOrEqual(figures.mapBytes);
    // The bar runs over what is read, which is well short of the drive: it does not end at the drive's size.
    for (const p of reading) expect(p.bytesTotal).toBe(figures.readBytes);
    expect(reading.at(-1)?.bytesDone).toBe(figures.readBytes);
    expect(figures.readBytes).toBeLessThan(DRIVE / 2);
    // What the helper sent is what the drive was asked for (the kernel may read a little more around it).
    expect(figures.readBytes).toBeLessThanOrEqual(read);
    expect(read, `sysfs counted ${read} bytes, the plan ${figures.readBytes}`).toBeLessThanOrEqual(
      figures.readBytes * 1.05 + 2 * MiB,
    );
    // The speed and the time left are those of the bytes still to read, once the throttle's first burst is past.
    for (const p of reading.slice(2, -1)) {
      expect(p.speed).toBeLessThan(READ_BYTES_PER_SECOND * 1.5);
      expect(p.eta).toBeLessThan(((figures.readBytes - p.bytesDone) / READ_BYTES_PER_SECOND) * 2 + 0.5);
    }

    // The read-back counts what it reads of the file: its data, not its holes.
    const verifying = progress.filter((p) => p.phase === 'verifying');
    expectCountsUp(verifying);
    expect(verifying.at(-1)?.bytesDone).toBe(verifying.at(-1)?.bytesTotal);
    expect(verifying.at(-1)?.bytesTotal).toBeLessThan(DRIVE / 2);

    const { blocks, size } = statSync(file);
    expect(figures).toEqual({
      driveBytes: DRIVE,
      readBytes: figures.readBytes,
      mapBytes: figures.mapBytes,
      fileBytes: blocks * 512,
      fileLength: size,
    });
    expect(size).toBe(DRIVE);
    expect(blocks * 512).toBeLessThan(DRIVE / 2);
  });

  it('ends a compressed backup with the file it wrote, and says plainly when the file was not read back', async () => {
    const dir = scratchDir();
    const drive = attachLoop(osImage(dir, DRIVE, 'drive.img', { fat32: true }));
    const file = join(scratchDir(), 'card.img.zst');
    const run = await backupCli(drive.path, file, ['--compress', 'zstd']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const { blocks, size } = statSync(file);
    const figures = figuresOf(run, file);
    expect(figures).toMatchObject({
      driveBytes: DRIVE,
      fileBytes: blocks * 512,
      fileLength: size,
      compression: 'zstd',
    });
    // Decoded back, every byte of the image is read back and compared.
    const verifying = progressOf(run).filter((p) => p.phase === 'verifying');
    expect(verifying.at(-1)).toMatchObject({ bytesDone: DRIVE, bytesTotal: DRIVE });

    // Without --json: the last line, as a person reads it, after no read-back.
    const plain = join(scratchDir(), 'unverified.img');
    assertOwnedLoop(drive.path);
    assertTestTarget(plain);
    const human = await collect(spawnCli(['backup', '--yes', '--no-verify', drive.path, plain]));
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).toMatch(/reading…/);
    expect(human.stderr).not.toMatch(/verifying/);
    const { readBytes, mapBytes } = figuresOf(run, file);
    const words = `Read ${formatBytes(readBytes)} of the ${formatBytes(DRIVE)} drive (including ${formatBytes(mapBytes)} of tables and filesystem maps read to find what is used). The image file is ${formatBytes(DRIVE)} long and takes ${formatBytes(statSync(plain).blocks * 512)} on disk.`;
    expect(human.stdout).toBe(
      `${plain}: saved, NOT verified: verification was turned off, so the file was not read back (${human.stdout.match(/\(([^)]+)\)/)?.[1]}). ${words}\n`,
    );
  });
});
