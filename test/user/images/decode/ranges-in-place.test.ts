/**
 * A local raw image under a block map is read only where the map sends or checks bytes: the input
 * carries those ranges one after another, and the sink places each at its offset in the image. What
 * reaches the helper is the same as when every byte was read and the map dropped the rest; a file
 * cut inside a range is still reported as truncated, and a range's digest is still checked.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import type { DecodeMap } from '../../../../common/contracts/decoder-protocol.js';
import { ImageSink } from '../../../../user/images/decode/image-sink.js';
import { openInput } from '../../../../user/images/decode/input.js';
import { KiB, MiB } from '../../../../common/domain/units.js';
import { scratchDir } from '../../../support/loop-device.js';

const SIZE = 8 * MiB;
/** Two map ranges with digests; the helper gets them less a free hole in the second. */
const RANGES = [
  { offset: 64 * KiB, length: 1 * MiB },
  { offset: 3 * MiB, length: 2 * MiB },
] as const;
const EXTENTS: [number, number][] = [
  [64 * KiB, 1 * MiB],
  [3 * MiB, 512 * KiB],
  [4 * MiB, 1 * MiB],
];

async function setUp() {
  const dir = scratchDir();
  const image = randomBytes(SIZE);
  const path = join(dir, 'image.img');
  writeFileSync(path, image);
  const map: DecodeMap = {
    extents: EXTENTS,
    ranges: RANGES.map((r) => ({
      ...r,
      digest: createHash('sha256')
        .update(image.subarray(r.offset, r.offset + r.length))
        .digest('hex'),
    })),
    digestAlgorithm: 'sha256',
    name: 'test.bmap',
  };
  const layout = RANGES.map((r): [number, number] => [r.offset, r.length]);
  return { dir, image, path, map, layout };
}

/** Runs the ranges of `path` through a sink into a file; the file's bytes and what was read. */
async function sendRanges(dir: string, path: string, map: DecodeMap, layout: [number, number][], imageSize = SIZE) {
  const out = join(dir, 'sent.bin');
  const fd = openSync(out, 'w');
  try {
    const input = await openInput({ kind: 'file', path }, { hash: false, ranges: layout });
    const sink = new ImageSink(fd, imageSize, map, 'raw', null, false, layout);
    await pipeline(input.stream, sink);
    return { sent: readFileSync(out), read: input.bytesRead(), sink };
  } finally {
    closeSync(fd);
  }
}

describe('a raw image read in place under a map', () => {
  it('reads only the map’s ranges and sends exactly its extents, as reading every byte would', async () => {
    const { dir, image, path, map, layout } = await setUp();
    const { sent, read, sink } = await sendRanges(dir, path, map, layout);
    expect(read).toBe(3 * MiB);
    expect(sent.equals(Buffer.concat(EXTENTS.map(([o, l]) => image.subarray(o, o + l))))).toBe(true);
    expect(sink.position).toBe(SIZE);

    // The same map over every byte of the image: the same bytes go out.
    const whole = join(dir, 'whole.bin');
    const fd = openSync(whole, 'w');
    const input = await openInput({ kind: 'file', path }, { hash: false });
    await pipeline(input.stream, new ImageSink(fd, SIZE, map, 'raw'));
    closeSync(fd);
    expect(input.bytesRead()).toBe(SIZE);
    expect(readFileSync(whole).equals(sent)).toBe(true);
  });

  it('checks each range’s digest: a changed byte in a range fails at that range', async () => {
    const { dir, image, path, map, layout } = await setUp();
    const changed = Buffer.from(image);
    changed[3 * MiB + 700 * KiB] = (changed[3 * MiB + 700 * KiB] ?? 0) ^ 1;
    writeFileSync(path, changed);
    await expect(sendRanges(dir, path, map, layout)).rejects.toMatchObject({
      failure: { code: 'source-checksum-mismatch', offset: 3 * MiB },
    });
  });

  it('a file cut inside a range is truncated at that byte, not passed over', async () => {
    const { dir, image, path, map, layout } = await setUp();
    writeFileSync(path, image.subarray(0, 4 * MiB));
    await expect(sendRanges(dir, path, map, layout)).rejects.toMatchObject({
      failure: { code: 'source-truncated', offset: 4 * MiB },
    });
  });
});
