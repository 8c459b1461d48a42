/**
 * The repair exchange with the real helper, as root, where the image reaches it as a stream: the
 * helper asks this side for the ranges it must rewrite, and this side answers through a re-read
 * the test controls. The honest answer repairs the card; an answer with wrong bytes, or with bytes
 * at a place never asked for, is refused, and the helper writes none of it.
 */
import { spawn } from 'node:child_process';
import { closeSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { Extent } from '../../common/domain/extents.js';
import type { TargetResult } from '../../common/domain/result.js';
import { KiB, MiB } from '../../common/domain/units.js';
import { createOsPipe } from '../../node/os-pipe.js';
import type { ImageReread, RereadPiece } from '../../user/images/feed/reread.js';
import { startHelper } from '../../user/launcher/launch.js';
import { assertTestTarget } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { fakeCard } from '../support/fake-card.js';
import { readBytes, scratchDir, writeRandomFile } from '../support/loop-device.js';
import { builtHelper } from '../support/unprivileged.js';

const IMAGE_BYTES = 64 * MiB;
/** The flaky card's bad 4 KiB block; fake-card.py flips byte 17 of it. */
const FLAKY_AT = 50 * MiB + 8 * KiB;

/** Flashes `image` as a stream (cat into a pipe, as a decoder would) onto a card that corrupts one block once, answering repairs with `reread`. */
async function flashStream(
  image: string,
  reread: ImageReread,
  overlays?: [number, string][],
): Promise<{ result: TargetResult | undefined; backing: string; asked: Extent[][] }> {
  const card = await fakeCard(256 * MiB, { kind: 'flaky', at: FLAKY_AT, always: false });
  assertTestTarget(card.path);
  const pipe = await createOsPipe();
  const cat = spawn('cat', [image], { stdio: ['ignore', pipe.writeFd, 'inherit'] });
  closeSync(pipe.writeFd);
  const asked: Extent[][] = [];
  try {
    const job = startHelper({
      source: pipe.readFd,
      job: { kind: 'flash', targets: [card.path], imageSize: IMAGE_BYTES, sourceSeekable: false, verify: true },
      ...(overlays === undefined ? {} : { overlays: [overlays] }),
      program: builtHelper(),
    });
    job.answerRepairs((ranges, signal) => {
      asked.push([...ranges]);
      return reread(ranges, signal);
    });
    const [result] = await job.result;
    return { result, backing: card.backing, asked };
  } finally {
    closeSync(pipe.readFd);
    cat.kill();
  }
}

describeDevices('the repair exchange with the real helper', () => {
  let image = '';
  let bytes = Buffer.alloc(0);
  beforeAll(() => {
    image = join(scratchDir(), 'image.img');
    writeRandomFile(image, IMAGE_BYTES);
    bytes = readFileSync(image);
  });

  /** The image's own bytes of `ranges`, changed by `tamper` (given each piece and its offset). */
  const answering = (
    tamper: (piece: Buffer, offset: number) => RereadPiece = (piece, offset) => ({ offset, bytes: piece }),
  ): ImageReread =>
    async function* (ranges) {
      for (const [offset, length] of ranges) {
        for (let at = 0; at < length; at += 100_000) {
          const n = Math.min(100_000, length - at);
          yield tamper(Buffer.from(bytes.subarray(offset + at, offset + at + n)), offset + at);
        }
      }
    };

  it('asks for exactly the bad block and, answered with the image, repairs it', async () => {
    const { result, backing, asked } = await flashStream(image, answering());
    expect(asked).toEqual([[[50 * MiB, MiB / 4]]]);
    expect(result).toMatchObject({ status: 'ok', verified: true, repaired: { blocks: 1, offsets: [50 * MiB] } });
    expect(readBytes(backing, 0, IMAGE_BYTES).equals(bytes)).toBe(true);
  });

  it('answered with bytes other than the image: refused before a byte is written, and the card keeps its bad block', async () => {
    const { result, backing } = await flashStream(
      image,
      answering((piece, offset) => {
        piece[0] = (piece[0] ?? 0) ^ 0xff;
        return { offset, bytes: piece };
      }),
    );
    expect(result).toMatchObject({ status: 'failed', code: 'verify-mismatch', offset: 50 * MiB, badBlocks: 1 });
    if (result?.status !== 'failed') return;
    expect(result.message).toContain(
      'The image, read again by the app, differs from what was written at byte offset 52428800',
    );
    // None of the wrong bytes reached the card: only the block the card itself corrupted differs.
    const grain = readBytes(backing, 50 * MiB, MiB / 4);
    const want = bytes.subarray(50 * MiB, 50 * MiB + MiB / 4);
    const differing = [...grain.keys()].filter((i) => grain[i] !== want[i]);
    expect(differing).toEqual([FLAKY_AT - 50 * MiB + 17]);
  });

  it('answered with bytes for a place it never asked for (the partition table): refused, and that place keeps the image', async () => {
    const hostile = Buffer.alloc(32 * KiB, 0x55);
    const { result, backing } = await flashStream(
      image,
      answering(() => ({ offset: 0, bytes: hostile })),
    );
    expect(result).toMatchObject({ status: 'failed', code: 'verify-mismatch' });
    if (result?.status !== 'failed') return;
    expect(result.message).toContain(
      `The app answered the repair wrongly: bytes at 0 where those at ${50 * MiB} were due.`,
    );
    expect(readBytes(backing, 0, 32 * KiB).equals(bytes.subarray(0, 32 * KiB))).toBe(true);
  });

  it('a block that customisation also writes is repaired with the image first; the customisation then goes on top of it', async () => {
    // Customisation is written after the repair (flash.ts step 6) and read back on its own, so the
    // repair restores the image's bytes and the customisation's land on them, as on every other block.
    const custom = Buffer.alloc(10_000, 0x5a);
    const at = FLAKY_AT - 100;
    const { result, backing } = await flashStream(image, answering(), [[at, custom.toString('base64')]]);
    expect(result).toMatchObject({
      status: 'ok',
      verified: true,
      customised: true,
      repaired: { blocks: 1, offsets: [50 * MiB] },
    });
    const want = Buffer.from(bytes);
    custom.copy(want, at);
    expect(readBytes(backing, 0, IMAGE_BYTES).equals(want)).toBe(true);
  });
});
