/**
 * The helper writes only the medium the user chose: a flash job names, per target, the medium the
 * listing saw (Linux's disk sequence number), and a drive that holds another by the time the
 * helper opens it (a card swapped in the same reader during the password prompt) is refused with
 * nothing written. The real helper process, real loop devices and the kernel's own numbers.
 */
import { closeSync, openSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { listDrives } from '../../user/drives/list-drives.js';
import { startHelper } from '../../user/launcher/launch.js';
import { assertTestTarget } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, digestFile, mountDevice, scratchDir, writeRandomFile } from '../support/loop-device.js';
import { mkfsExt4, mountpointsOf } from '../support/partitions.js';
import { builtHelper } from '../support/unprivileged.js';

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
