import { describe, expect, it } from 'vitest';
import { JobError } from '../../common/domain/failure.js';
import { StreamLayout } from '../../writer/stream-layout.js';

const K = 4096;

describe('StreamLayout: where stream bytes go on the device', () => {
  it('the whole image maps each stream byte to the same device byte', () => {
    const layout = StreamLayout.whole(10 * K);
    expect(layout.sparse).toBe(false);
    expect(layout.streamBytes).toBe(10 * K);
    expect(layout.pieces(3 * K, 2 * K)).toEqual([{ bufferOffset: 0, deviceOffset: 3 * K, length: 2 * K }]);
    expect(layout.deviceOffset(12345)).toBe(12345);
  });

  it('a block map concatenates its extents: a span crossing two extents becomes two pieces', () => {
    const layout = StreamLayout.mapped(
      [
        [0, 2 * K],
        [10 * K, 3 * K],
        [20 * K, 1000],
      ],
      20 * K + 1000,
    );
    expect(layout.streamBytes).toBe(5 * K + 1000);
    expect(layout.pieces(K, 3 * K)).toEqual([
      { bufferOffset: 0, deviceOffset: K, length: K },
      { bufferOffset: K, deviceOffset: 10 * K, length: 2 * K },
    ]);
    // The last extent ends the image and may be a partial block.
    expect(layout.pieces(5 * K, 1000)).toEqual([{ bufferOffset: 0, deviceOffset: 20 * K, length: 1000 }]);
    expect(layout.deviceOffset(2 * K + 5)).toBe(10 * K + 5);
    expect(layout.deviceOffset(5 * K + 1000)).toBe(20 * K + 1000);
  });

  it('a span covering many extents gets them all, in order', () => {
    const extents: [number, number][] = Array.from({ length: 50 }, (_, i) => [i * 3 * K, K]);
    const layout = StreamLayout.mapped(extents, 150 * K);
    const pieces = layout.pieces(0, 50 * K);
    expect(pieces.map((p) => p.deviceOffset)).toEqual(extents.map(([offset]) => offset));
    expect(pieces.map((p) => p.bufferOffset)).toEqual(extents.map((_, i) => i * K));
  });

  it.each([
    [
      'unsorted',
      [
        [8 * K, K],
        [0, K],
      ],
    ],
    [
      'overlapping',
      [
        [0, 2 * K],
        [K, K],
      ],
    ],
    [
      'outside the image',
      [
        [0, K],
        [16 * K, K],
      ],
    ],
    ['misaligned start', [[100, K]]],
    [
      'misaligned length before the end',
      [
        [0, 1000],
        [4 * K, K],
      ],
    ],
    ['empty', [[0, 0]]],
  ] as [string, [number, number][]][])('refuses a map that is %s', (_name, extents) => {
    expect(() => StreamLayout.mapped(extents, 16 * K)).toThrow(JobError);
  });

  it('places the image end past the ranges left out of a stream of unknown length, not at its byte count', () => {
    const layout = StreamLayout.whole(null);
    expect(layout.imageEnd(3 * K)).toBe(3 * K);
    // Free space found at 4K..12K while 2K had arrived, then more at the very end.
    layout.omit([[4 * K, 8 * K]], 2 * K);
    expect(layout.imageEnd(6 * K)).toBe(14 * K);
    layout.omit([[20 * K, 4 * K]], 10 * K);
    // 12 KiB streamed: 4K before the first range, 8K after it up to 20K; the image reaches 24K.
    expect(layout.imageEnd(12 * K)).toBe(24 * K);
    expect(StreamLayout.mapped([[0, K]], 16 * K).imageEnd(K)).toBe(16 * K);
  });

  it('names the parts of given ranges the stream does not carry (a customisation in free space left out), and none for the whole image', () => {
    expect(StreamLayout.whole(16 * K).notCarried([[K, 2 * K]])).toEqual([]);
    const layout = StreamLayout.whole(null);
    layout.omit([[4 * K, 8 * K]], 0);
    expect(
      layout.notCarried([
        [2 * K, 4 * K],
        [10 * K, 100],
        [12 * K, 100],
      ]),
    ).toEqual([
      [4 * K, 2 * K],
      [10 * K, 100],
    ]);
  });
});
