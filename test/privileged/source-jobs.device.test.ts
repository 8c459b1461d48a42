/**
 * The helper's own checks on a drive it is asked to read (a clone's or a backup's source, or a
 * disk to compare with an image), with no CLI in front of it to catch mistakes first.
 */
import { openSync, closeSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { startHelper } from '../../user/launcher/launch.js';
import type { ByteSource } from '../../node/byte-source.js';
import { describeDevices } from '../support/device-suite.js';
import {
  assertOwnedLoop,
  createLoop,
  digestFile,
  partitionedLoop,
  readBytes,
  scratchDir,
  writeRandomFile,
} from '../support/loop-device.js';
import { builtHelper } from '../support/unprivileged.js';

/** How many bytes came out of a backup's way out before its end (0 when there was none), closing it. */
async function readAll(bytes: ByteSource | null): Promise<number> {
  if (bytes === null) return 0;
  let total = 0;
  for (let n = await bytes.read(Buffer.alloc(4096), 4096); n > 0; n = await bytes.read(Buffer.alloc(4096), 4096))
    total += n;
  await bytes.close();
  return total;
}

describeDevices('the helper reading a drive', () => {
  it('refuses to clone a drive onto itself, writing nothing', async () => {
    const drive = createLoop({ size: 8 * MiB });
    assertOwnedLoop(drive.path);
    const before = digestFile(drive.backing);
    const job = startHelper({
      job: { kind: 'clone', source: drive.path, targets: [drive.path], verify: true },
      program: builtHelper(),
    });
    expect(await job.result).toEqual([
      expect.objectContaining({ status: 'failed', target: drive.path, code: 'target-is-source' }),
    ]);
    expect(digestFile(drive.backing)).toBe(before);
  });

  it('refuses to back up a partition, and sends nothing', async () => {
    const drive = await partitionedLoop('label: dos\n1M,4M,83\n', 8 * MiB);
    assertOwnedLoop(drive.path);
    const job = startHelper({ job: { kind: 'backup', source: `${drive.path}p1` }, program: builtHelper() });
    // The drive's way out reaches end-of-file: nothing else.
    expect(await readAll(await job.driveBytes)).toBe(0);
    expect(await job.result).toEqual([
      expect.objectContaining({ status: 'failed', target: `${drive.path}p1`, code: 'target-is-partition' }),
    ]);
  });

  it('refuses to back up a drive whose size is not the one the app checked (a card swapped during the password prompt), and sends nothing', async () => {
    const drive = createLoop({ size: 8 * MiB });
    assertOwnedLoop(drive.path);
    const job = startHelper({ job: { kind: 'backup', source: drive.path, size: 4 * MiB }, program: builtHelper() });
    expect(await readAll(await job.driveBytes)).toBe(0);
    expect(await job.result).toEqual([
      expect.objectContaining({
        status: 'failed',
        target: drive.path,
        code: 'source-read-error',
        message: expect.stringContaining('is not the drive that was checked') as unknown,
      }),
    ]);
  });

  it('compares the disk it was started for with the image on fd 0 (a verify), naming the first differing byte; a file is not its to read', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 3 * MiB);
    const drive = createLoop({ size: 4 * MiB, dir });
    assertOwnedLoop(drive.path);
    const backing = openSync(drive.backing, 'r+');
    writeSync(backing, readBytes(image, 0, 3 * MiB), 0, 3 * MiB, 0);
    writeSync(backing, Buffer.from([(readBytes(image, MiB + 7, 1)[0] ?? 0) ^ 0x80]), 0, 1, MiB + 7);
    closeSync(backing);
    const compare = async (device: string) => {
      const fd = openSync(image, 'r');
      try {
        return await startHelper({
          source: fd,
          job: { kind: 'verify', target: device, imageSize: 3 * MiB },
          program: builtHelper(),
        }).result;
      } finally {
        closeSync(fd);
      }
    };
    expect(await compare(drive.path)).toEqual([
      expect.objectContaining({ status: 'failed', target: drive.path, code: 'verify-mismatch', offset: MiB + 7 }),
    ]);
    expect(await compare(drive.backing)).toEqual([
      expect.objectContaining({ status: 'failed', target: drive.backing, code: 'target-not-block-device' }),
    ]);
  });
});
