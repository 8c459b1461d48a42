/**
 * A drive's customisation through the real helper: raw byte ranges per target, written after the
 * image, read back and compared; and the same ranges compared by a verify job.
 */
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { startHelper } from '../../user/launcher/launch.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, readBytes, scratchDir, writeRandomFile } from '../support/loop-device.js';
import { builtHelper } from '../support/unprivileged.js';

const IMAGE_SIZE = 8 * MiB + 1000;

/** Ranges across block boundaries, one past the 32 KiB a message carries. */
function card(seed: number): [number, string][] {
  const bytes = (n: number, fill: number) => Buffer.alloc(n, fill).toString('base64');
  return [
    [2 * MiB + 700, bytes(100_000, seed)],
    [5 * MiB - 3, bytes(7, seed + 1)],
    [123, bytes(1, seed + 2)],
  ];
}

function expected(image: Buffer, ranges: [number, string][]): Buffer {
  const out = Buffer.from(image);
  for (const [offset, data] of ranges) Buffer.from(data, 'base64').copy(out, offset);
  return out;
}

describeDevices('customisation bytes through the helper', () => {
  it('each target gets its own bytes after the image; the bytes around them stay the image', async () => {
    const dir = scratchDir();
    const path = join(dir, 'image.img');
    writeRandomFile(path, IMAGE_SIZE);
    const image = readFileSync(path);
    const loops = [createLoop({ size: 16 * MiB }), createLoop({ size: 16 * MiB })];
    const fd = openSync(path, 'r');
    try {
      const job = startHelper({
        source: fd,
        job: {
          kind: 'flash',
          targets: loops.map((l) => l.path),
          imageSize: IMAGE_SIZE,
          sourceSeekable: true,
          verify: true,
        },
        overlays: [card(0x41), card(0x61)],
        program: builtHelper(),
      });
      const results = await job.result;
      expect(results).toEqual(
        loops.map((l) => expect.objectContaining({ status: 'ok', target: l.path, verified: true, customised: true })),
      );
    } finally {
      closeSync(fd);
    }
    expect(readBytes(loops[0]?.backing ?? '', 0, IMAGE_SIZE).equals(expected(image, card(0x41)))).toBe(true);
    expect(readBytes(loops[1]?.backing ?? '', 0, IMAGE_SIZE).equals(expected(image, card(0x61)))).toBe(true);

    // A verify compares the customised bytes in the image's place: equal with them, not without.
    const verify = async (overlays: [number, string][][] | undefined) => {
      const source = openSync(path, 'r');
      try {
        return (
          await startHelper({
            source,
            job: { kind: 'verify', target: loops[0]?.path ?? '', imageSize: IMAGE_SIZE },
            overlays,
            program: builtHelper(),
          }).result
        )[0];
      } finally {
        closeSync(source);
      }
    };
    expect(await verify([card(0x41)])).toMatchObject({ status: 'ok' });
    expect(await verify([card(0x61)])).toMatchObject({ status: 'failed', code: 'verify-mismatch', offset: 123 });
    expect(await verify(undefined)).toMatchObject({ status: 'failed', code: 'verify-mismatch', offset: 123 });
  });

  it('bytes past the image are not written, and the drive says so', async () => {
    const dir = scratchDir();
    const path = join(dir, 'image.img');
    writeRandomFile(path, IMAGE_SIZE);
    const loop = createLoop({ size: 16 * MiB });
    const fd = openSync(path, 'r');
    try {
      const job = startHelper({
        source: fd,
        job: { kind: 'flash', targets: [loop.path], imageSize: IMAGE_SIZE, sourceSeekable: true, verify: true },
        overlays: [[[IMAGE_SIZE - 2, Buffer.from('four').toString('base64')]]],
        program: builtHelper(),
      });
      expect(await job.result).toEqual([
        expect.objectContaining({
          status: 'failed',
          code: 'protocol-error',
          message: expect.stringMatching(
            /reaches past the image's 8389608 bytes \(from offset 8389606\); it was not written\. The drive is incomplete/,
          ),
        }),
      ]);
    } finally {
      closeSync(fd);
    }
    expect(readBytes(loop.backing, IMAGE_SIZE - 2, 2).equals(readFileSync(path).subarray(IMAGE_SIZE - 2))).toBe(true);
  });
});
