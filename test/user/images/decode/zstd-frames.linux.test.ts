import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { JobError } from '../../../../common/domain/failure.js';
import { describe, expect, it } from 'vitest';
import { frameLength, ZstdFrameSplitter, type FramePiece } from '../../../../user/images/decode/zstd-frames.js';

function zstd(data: Buffer, ...flags: string[]): Buffer {
  return execFileSync('zstd', ['-q', '-c', ...flags], { input: data, maxBuffer: 64 * 1024 * 1024 });
}

/** Runs the splitter over `input` fed `step` bytes at a time; returns the frames' bytes. */
async function split(input: Buffer, step: number): Promise<Buffer[]> {
  const frames: Buffer[][] = [];
  const chunks = Array.from({ length: Math.ceil(input.length / step) }, (_, i) =>
    input.subarray(i * step, (i + 1) * step),
  );
  await pipeline(
    Readable.from(chunks),
    new ZstdFrameSplitter(),
    new Writable({
      objectMode: true,
      write(piece: FramePiece, _encoding, callback) {
        if (Buffer.isBuffer(piece)) frames[frames.length - 1]?.push(piece);
        else frames.push([]);
        callback();
      },
    }),
  );
  return frames.map((parts) => Buffer.concat(parts));
}

describe('ZstdFrameSplitter: frames cut apart without decoding', () => {
  const a = zstd(Buffer.concat([randomBytes(300_000), Buffer.alloc(200_000)]));
  const b = zstd(Buffer.alloc(1_000_000, 7), '--no-check');
  const skippable = Buffer.concat([Buffer.from([0x50, 0x2a, 0x4d, 0x18, 6, 0, 0, 0]), Buffer.from('seek!!')]);

  for (const step of [1, 7, 4096, 1 << 20]) {
    it(`gives back each frame exactly, skippable frames dropped, fed ${step} bytes at a time`, async () => {
      const frames = await split(Buffer.concat([a, skippable, b]), step);
      expect(frames.map((f) => f.length)).toEqual([a.length, b.length]);
      expect(frames[0]?.equals(a)).toBe(true);
      expect(frames[1]?.equals(b)).toBe(true);
    });
  }

  it('says a stream that ends inside a frame is truncated', async () => {
    await expect(split(a.subarray(0, a.length - 10), 4096)).rejects.toThrow(/ends inside a frame/);
  });

  it('says bytes that are no frame are corrupt', async () => {
    await expect(split(Buffer.concat([a, Buffer.from('garbage!')]), 4096)).rejects.toBeInstanceOf(JobError);
  });

  it('frameLength finds where a frame ends inside padding (qcow2 clusters)', () => {
    expect(frameLength(Buffer.concat([b, Buffer.alloc(300)]))).toBe(b.length);
    expect(frameLength(b.subarray(0, b.length - 1))).toBeNull();
  });
});
