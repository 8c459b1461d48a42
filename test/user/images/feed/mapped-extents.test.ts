import { describe, expect, it } from 'vitest';
import { MAX_EXTENTS } from '../../../../common/contracts/helper-protocol.js';
import { mappedExtents } from '../../../../user/images/feed/mapped-extents.js';

const K = 4096;

describe('mappedExtents: block-map ranges as the helper writes them', () => {
  it('widens ranges to 4 KiB and joins those that touch', () => {
    expect(
      mappedExtents(
        [
          { offset: 512, length: 512 },
          { offset: 3 * K + 100, length: 10 },
          { offset: 4 * K, length: K },
        ],
        100 * K,
      ),
    ).toEqual([
      [0, K],
      [3 * K, 2 * K],
    ]);
  });

  it('lets the last extent end where the image does', () => {
    expect(mappedExtents([{ offset: 8 * K, length: 1000 }], 8 * K + 1000)).toEqual([[8 * K, 1000]]);
  });

  it('merges the closest neighbours until a long map fits a job message, never dropping a range', () => {
    // 1 KiB ranges 4 KiB apart, with a 64 KiB wider gap after every tenth.
    const ranges = Array.from({ length: MAX_EXTENTS + 500 }, (_, i) => ({
      offset: i * 4 * K + Math.floor(i / 10) * 64 * K,
      length: K,
    }));
    const size = (ranges[ranges.length - 1]?.offset ?? 0) + K;
    const extents = mappedExtents(ranges, size);
    expect(extents.length).toBe(MAX_EXTENTS);
    for (const { offset, length } of ranges) {
      expect(extents.some(([start, bytes]) => start <= offset && offset + length <= start + bytes)).toBe(true);
    }
    // Only the narrow gaps were merged: every wide one is still a gap.
    const gaps = extents.slice(1).map(([start], i) => start - ((extents[i]?.[0] ?? 0) + (extents[i]?.[1] ?? 0)));
    expect(gaps.filter((gap) => gap > 64 * K).length).toBe(Math.floor((ranges.length - 1) / 10));
  });
});
