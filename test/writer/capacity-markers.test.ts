import { describe, expect, it } from 'vitest';
import { GiB, KiB, MiB } from '../../common/domain/units.js';
import {
  judgeMarkers,
  MARKER_ALIGN,
  MarkerFormat,
  markerPositions,
  type MarkerReading,
} from '../../writer/capacity-markers.js';
import { allocateJobMemory } from '../../writer/job-memory.js';

const BLOCK = 512;

function format(): { format: MarkerFormat; block: Buffer } {
  const memory = allocateJobMemory(4 * KiB);
  return { format: new MarkerFormat(memory.hash), block: memory.bytes.subarray(0, BLOCK) };
}

describe('marker positions', () => {
  it('start right past the image, end on the last block, ascend, and are aligned', () => {
    const positions = markerPositions(128 * MiB + 5, 4 * GiB, BLOCK);
    expect(positions[0]).toBe(128 * MiB + MARKER_ALIGN);
    expect(positions.at(-1)).toBe(4 * GiB - BLOCK);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(new Set(positions).size).toBe(positions.length);
    for (const p of positions.slice(0, -1)) expect(p % MARKER_ALIGN).toBe(0);
  });

  it('are dense enough everywhere to place the real capacity within 10%', () => {
    for (const [from, capacity] of [
      [128 * MiB, 4 * GiB],
      [MiB, 1024 * GiB],
      [4 * GiB, 64 * GiB],
    ] as const) {
      const positions = markerPositions(from, capacity, BLOCK);
      for (let i = 1; i < positions.length; i++)
        expect((positions[i] ?? 0) / (positions[i - 1] ?? 1)).toBeLessThanOrEqual(1.1);
      expect(positions.length).toBeLessThanOrEqual(256);
    }
  });

  it('include the first one plus every power of two, which a 2^n wrap-around maps onto it', () => {
    const positions = new Set(markerPositions(100 * MiB, 4 * GiB, BLOCK));
    const first = 100 * MiB;
    for (let power = MiB; first + power < 4 * GiB; power *= 2) expect(positions.has(first + power)).toBe(true);
  });

  it('are none when the image fills the drive', () => {
    expect(markerPositions(4 * GiB, 4 * GiB, BLOCK)).toEqual([]);
    expect(markerPositions(4 * GiB - 100, 4 * GiB, BLOCK)).toEqual([]);
  });
});

describe('a marker', () => {
  it('reads back as itself, as another offset’s marker, or as garbage when one byte changed', () => {
    const { format: f, block } = format();
    f.fill(block, 300 * MiB);
    // classify() zeroes the checksum field it checks: the block is copied back in before each look.
    const marker = Buffer.from(block);
    expect(f.classify(block, 300 * MiB)).toEqual({ state: 'ok' });
    marker.copy(block);
    expect(f.classify(block, 44 * MiB)).toEqual({ state: 'alias', of: 300 * MiB });
    marker.copy(block);
    block[BLOCK - 1] = (block[BLOCK - 1] ?? 0) ^ 1;
    expect(f.classify(block, 300 * MiB)).toEqual({ state: 'garbage' });
    block.fill(0);
    expect(f.classify(block, 300 * MiB)).toEqual({ state: 'zeros' });
  });

  it('of an earlier job (another nonce) is garbage to this one', () => {
    const earlier = format();
    const now = format();
    earlier.format.fill(earlier.block, 300 * MiB);
    earlier.block.copy(now.block);
    expect(now.format.classify(now.block, 300 * MiB)).toEqual({ state: 'garbage' });
  });

  it('gets a nonce of its own in every job (no two of 10,000 alike, none all zeros)', () => {
    const nonces = new Set(Array.from({ length: 10_000 }, () => format().format.nonce.toString('hex')));
    expect(nonces.size).toBe(10_000);
    expect(nonces.has('0'.repeat(32))).toBe(false);
  });
});

describe('judging the markers', () => {
  const at = (position: number, state: MarkerReading['state'], of = 0): MarkerReading =>
    state === 'alias' ? { position, state, of } : ({ position, state } as MarkerReading);

  it('passes when every marker came back', () => {
    expect(judgeMarkers([at(200 * MiB, 'ok'), at(4 * GiB - BLOCK, 'ok')], 128 * MiB, 4 * GiB, BLOCK)).toBeNull();
  });

  it('calls zeros or garbage past a point limbo, with what the last good marker proves', () => {
    const readings = [at(200 * MiB, 'ok'), at(250 * MiB, 'ok'), at(270 * MiB, 'zeros'), at(400 * MiB, 'garbage')];
    expect(judgeMarkers(readings, 128 * MiB, 4 * GiB, BLOCK)).toEqual({
      kind: 'limbo',
      realBytes: 250 * MiB + BLOCK,
      claimedBytes: 4 * GiB,
    });
  });

  it('calls an I/O error at the first bad marker errors', () => {
    expect(judgeMarkers([at(200 * MiB, 'ok'), at(270 * MiB, 'error')], 128 * MiB, 4 * GiB, BLOCK)?.kind).toBe('errors');
  });

  it('calls another offset’s marker wrap-around, with the smallest period seen', () => {
    const readings = [
      at(128 * MiB, 'ok'),
      at(300 * MiB, 'garbage'),
      at(384 * MiB, 'alias', 128 * MiB),
      at(640 * MiB, 'alias', 128 * MiB),
    ];
    expect(judgeMarkers(readings, 128 * MiB, 4 * GiB, BLOCK)).toEqual({
      kind: 'wrap-around',
      realBytes: 256 * MiB,
      claimedBytes: 4 * GiB,
    });
  });
});
