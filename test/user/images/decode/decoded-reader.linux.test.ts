/**
 * The decoded-image reader serves any reads, in any order and any number at once, with the raw
 * image's bytes: random batches of concurrent reads of a .xz, .zst and .gz image (through the
 * system tools and through Sluice's own decoders) compared with the image itself.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DecodePlan } from '../../../../common/contracts/decoder-protocol.js';
import type { ImageFormat } from '../../../../common/domain/image-format.js';
import { MiB } from '../../../../common/domain/units.js';
import { builtDecodedReader } from '../../../support/built-modules.js';
import { scratchDir } from '../../../support/loop-device.js';
import { sh } from '../../../support/os-image.js';

const IMAGE_BYTES = 3 * MiB;
const FORMATS: [ImageFormat, string][] = [
  ['xz', 'xz'],
  ['zstd', 'zst'],
  ['gzip', 'gz'],
];

/** An image of random runs and zero runs, so that the decoders' blocks and the reads' offsets fall at odd places. */
function imageBytes(): Buffer {
  const image = Buffer.alloc(IMAGE_BYTES);
  for (let at = 0; at < IMAGE_BYTES; at += 96 * 1024) randomBytes(40 * 1024 + (at % 7) * 1000).copy(image, at);
  return image;
}

function plan(path: string, format: ImageFormat, systemTools: boolean): DecodePlan {
  return {
    location: { kind: 'file', path },
    format,
    imageSize: null,
    sha256: null,
    sha256From: null,
    map: null,
    zipEntry: null,
    sendImage: true,
    systemTools,
    freeSpace: false,
  };
}

/** Reads that may start anywhere in the image or past its end, of up to 80 KiB each. */
const reads = fc.array(
  fc.record({
    offset: fc.integer({ min: 0, max: IMAGE_BYTES + 4096 }),
    length: fc.integer({ min: 0, max: 80 * 1024 }),
  }),
  { minLength: 1, maxLength: 24 },
);

describe('reads through the decoded stream', () => {
  let dir: string;
  let raw: Buffer;
  beforeAll(() => {
    dir = scratchDir();
    raw = imageBytes();
    writeFileSync(join(dir, 'image.img'), raw);
    sh(dir, 'xz -k -1 --block-size=262144 image.img && zstd -q -1 image.img && gzip -k -1 image.img');
  });

  for (const [format, extension] of FORMATS) {
    it(`give the raw image's bytes for any batch of concurrent reads of a .${extension}`, async () => {
      const decodedReader = await builtDecodedReader();
      expect(readFileSync(join(dir, 'image.img')).equals(raw)).toBe(true);
      await fc.assert(
        fc.asyncProperty(reads, fc.boolean(), async (batch, systemTools) => {
          const reader = decodedReader(plan(join(dir, `image.img.${extension}`), format, systemTools));
          try {
            const got = await Promise.all(batch.map((r) => reader.readAt(r.offset, r.length)));
            got.forEach((bytes, i) => {
              const { offset, length } = batch[i] as { offset: number; length: number };
              expect(bytes.equals(raw.subarray(offset, offset + length))).toBe(true);
            });
          } finally {
            await reader.close();
          }
        }),
        { numRuns: 15 },
      );
    });
  }

  it('serves a batch asked for in any order in one pass (the reader refuses more than 8)', async () => {
    const decodedReader = await builtDecodedReader();
    const reader = decodedReader(plan(join(dir, 'image.img.xz'), 'xz', false));
    try {
      const offsets = Array.from({ length: 40 }, (_, i) => ((i * 7919) % 40) * 64 * 1024);
      const got = await Promise.all(offsets.map((offset) => reader.readAt(offset, 512)));
      got.forEach((bytes, i) =>
        expect(bytes.equals(raw.subarray(offsets[i], (offsets[i] as number) + 512))).toBe(true),
      );
      // Another batch behind the last read: one more pass.
      const again = await Promise.all([reader.readAt(1024, 10), reader.readAt(0, 10)]);
      expect(again.map((b) => b.toString('hex'))).toEqual([
        raw.subarray(1024, 1034).toString('hex'),
        raw.subarray(0, 10).toString('hex'),
      ]);
    } finally {
      await reader.close();
    }
  });
});
