/**
 * The helper writes only the medium the user chose: a flash job names, per target, the medium the
 * listing saw (Linux's disk sequence number), and a drive that holds another by the time the
 * helper opens it (a card swapped in the same reader during the password prompt) is refused with
 * nothing written. Jobs that only read a drive (a check puts back what it writes; a backup, a
 * comparison, a clone's source) name it too: a report on a card nobody chose is a lie. The real
 * helper process, real loop devices and the kernel's own numbers.
 */
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { listDrives } from '../../user/drives/list-drives.js';
import { startHelper } from '../../user/launcher/launch.js';
import type { HelperJob } from '../../common/contracts/helper-protocol.js';
import { assertTestTarget } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, digestFile, mountDevice, scratchDir, writeRandomFile } from '../support/loop-device.js';
import { mkfsExt4, mountpointsOf } from '../support/partitions.js';
import { builtHelper } from '../support/unprivileged.js';
import { builtBackupDrive } from '../support/built-modules.js';

const backupDrive = await builtBackupDrive();

function diskseq(device: string): string {
  return readFileSync(`/sys/block/${basename(device)}/diskseq`, 'utf8').trim();
}

/** Flashes `image` (a file, fd 0 of the helper) to `device`, naming `media` as the ones chosen. */
async function flashNaming(image: string, size: number, device: string, media: string[]) {
  const source = openSync(image, 'r');
  const job = startHelper({
    source,
    job: { kind: 'flash', targets: [device], media, imageSize: size, sourceSeekable: true, verify: true },
    program: builtHelper(),
  });
  try {
    return await job.result;
  } finally {
    closeSync(source);
  }
}

/** Runs `job` in the real helper, with `image` (if any) on its fd 0. */
async function run(job: HelperJob, image?: string) {
  const source = image === undefined ? undefined : openSync(image, 'r');
  try {
    return await startHelper({ ...(source === undefined ? {} : { source }), job, program: builtHelper() }).result;
  } finally {
    if (source !== undefined) closeSync(source);
  }
}

/** A number the kernel has not given any medium yet: it counts up from boot. */
function anotherMedium(device: string): string {
  return String(Number(diskseq(device)) + 1000);
}

const REFUSED = 'holds another medium than the one chosen';

describeDevices('the medium the user chose', () => {
  it('is what the drive listing reports for each drive: the kernel’s disk sequence number', async () => {
    const loop = createLoop({ size: 4 * MiB, fill: 'sparse' });
    assertTestTarget(loop.path);
    const listed = (await listDrives({ showAll: true, showVirtual: true })).find((d) => d.device === loop.path);
    expect(listed?.medium).toBe(diskseq(loop.path));
    expect(listed?.medium).toMatch(/^\d+$/);
  });

  it('is written when the drive still holds it, and refused with nothing written when it holds another', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    const size = 3 * MiB;
    writeRandomFile(image, size);
    const loop = createLoop({ size: 4 * MiB, dir });
    assertTestTarget(loop.path);
    const before = digestFile(loop.backing);
    const chosen = diskseq(loop.path);
    // Another medium: the number the kernel gives the next one inserted is higher than any so far.
    const [refused] = await flashNaming(image, size, loop.path, [String(Number(chosen) + 1000)]);
    expect(refused).toMatchObject({ status: 'failed', code: 'target-not-found', bytes: 0 });
    expect(refused?.status === 'failed' ? refused.message : '').toContain('holds another medium than the one chosen');
    // No "incomplete" words: nothing reached it.
    expect(refused?.status === 'failed' ? refused.message : '').not.toContain('incomplete');
    expect(digestFile(loop.backing)).toBe(before);

    // One medium for each drive, or none: a list of another length is refused.
    const [mismatched] = await flashNaming(image, size, loop.path, []);
    expect(mismatched).toMatchObject({ status: 'failed', code: 'protocol-error', bytes: 0 });
    expect(digestFile(loop.backing)).toBe(before);

    const [written] = await flashNaming(image, size, loop.path, [chosen]);
    expect(written).toMatchObject({ status: 'ok', verified: true });
    expect(digestFile(loop.backing)).not.toBe(before);
  });

  it('is compared before anything is unmounted: another card’s filesystem stays mounted', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 1 * MiB);
    const loop = createLoop({ size: 16 * MiB, dir, fill: 'sparse' });
    assertTestTarget(loop.path);
    mkfsExt4(loop.path, 'OTHER');
    const mounted = mountDevice(loop.path);
    const [refused] = await flashNaming(image, 1 * MiB, loop.path, [String(Number(diskseq(loop.path)) + 1000)]);
    expect(refused).toMatchObject({ status: 'failed', code: 'target-not-found', bytes: 0 });
    expect(mountpointsOf(loop.path)).toEqual([mounted]);
  });
});

describeDevices('the medium the user chose, for jobs that only read a drive or put back what they write', () => {
  it('a check of another medium writes no test block; of the chosen one, it runs', async () => {
    const loop = createLoop({ size: 64 * MiB });
    assertTestTarget(loop.path);
    const before = digestFile(loop.backing);
    const [refused] = await run({ kind: 'check', target: loop.path, medium: anotherMedium(loop.path) });
    expect(refused).toMatchObject({ status: 'failed', code: 'target-not-found', bytes: 0 });
    expect(refused?.status === 'failed' ? refused.message : '').toContain(
      `${REFUSED} (a card swapped in the same reader?). Nothing was written to it`,
    );
    expect(digestFile(loop.backing)).toBe(before);
    const [probed] = await run({ kind: 'check', target: loop.path, medium: diskseq(loop.path) });
    expect(probed).toMatchObject({ status: 'ok' });
    expect(digestFile(loop.backing)).toBe(before);
  });

  it('a comparison with another medium reads nothing and says so; with the chosen one it compares', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 2 * MiB);
    const loop = createLoop({ size: 4 * MiB, dir });
    assertTestTarget(loop.path);
    const [refused] = await run(
      { kind: 'verify', target: loop.path, medium: anotherMedium(loop.path), imageSize: 2 * MiB, sourceSeekable: true },
      image,
    );
    expect(refused).toMatchObject({ status: 'failed', code: 'target-not-found', bytes: 0 });
    expect(refused?.status === 'failed' ? refused.message : '').toContain(
      `${REFUSED} (a card swapped in the same reader?). Nothing was compared`,
    );
    // The chosen medium is compared: a random loop differs from the image at its first byte.
    const [compared] = await run(
      { kind: 'verify', target: loop.path, medium: diskseq(loop.path), imageSize: 2 * MiB, sourceSeekable: true },
      image,
    );
    expect(compared).toMatchObject({ status: 'failed', code: 'verify-mismatch', offset: 0 });
  });

  it('a backup of another medium saves nothing', async () => {
    const loop = createLoop({ size: 8 * MiB });
    assertTestTarget(loop.path);
    const file = join(scratchDir(), 'backup.img');
    const launch = (options: { job: HelperJob }) => startHelper({ ...options, program: builtHelper() });
    const refused = await backupDrive({
      drive: loop.path,
      file,
      driveSize: 8 * MiB,
      driveMedium: anotherMedium(loop.path),
      compress: null,
      trimToPartitions: false,
      allBlocks: false,
      verify: true,
      launch,
    });
    expect(refused).toMatchObject({ status: 'failed', code: 'source-read-error', bytes: 0 });
    expect(refused.status === 'failed' ? refused.message : '').toContain(
      `${REFUSED} (a card swapped in the same reader?). Nothing was read from it`,
    );
    expect(existsSync(file)).toBe(false);
    const saved = await backupDrive({
      drive: loop.path,
      file,
      driveSize: 8 * MiB,
      driveMedium: diskseq(loop.path),
      compress: null,
      trimToPartitions: false,
      allBlocks: false,
      verify: true,
      launch,
    });
    expect(saved).toMatchObject({ status: 'ok', verified: true });
    expect(digestFile(file)).toBe(digestFile(loop.backing));
  });

  it('a clone whose source holds another medium writes nothing to its target', async () => {
    const dir = scratchDir();
    const source = createLoop({ size: 4 * MiB, dir });
    const target = createLoop({ size: 4 * MiB, dir });
    assertTestTarget(source.path);
    assertTestTarget(target.path);
    const before = digestFile(target.backing);
    const [refused] = await run({
      kind: 'clone',
      source: source.path,
      sourceMedium: anotherMedium(source.path),
      targets: [target.path],
      media: [diskseq(target.path)],
      verify: true,
    });
    // Reported on the target's row as the source's read error: the target itself is fine.
    expect(refused).toMatchObject({ status: 'failed', target: target.path, code: 'source-read-error', bytes: 0 });
    expect(refused?.status === 'failed' ? refused.message : '').toContain(`${source.path} ${REFUSED}`);
    expect(digestFile(target.backing)).toBe(before);
    const [cloned] = await run({
      kind: 'clone',
      source: source.path,
      sourceMedium: diskseq(source.path),
      targets: [target.path],
      media: [diskseq(target.path)],
      verify: true,
    });
    expect(cloned).toMatchObject({ status: 'ok', verified: true });
    expect(digestFile(target.backing)).toBe(digestFile(source.backing));
  });
});
