/**
 * The writer against an in-memory disk (caligula's mock-disk test): every request the pump and
 * the flash make is checked for the size and alignment direct I/O demands, and the sequence of
 * events for the order a safe write needs. No root, no device: this runs anywhere, beside the
 * loop-device tests that prove the same on a real block device.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TargetResult } from '../../common/domain/result.js';
import { KiB, MiB } from '../../common/domain/units.js';
import { HEAD_BYTES, writeTargets } from '../../writer/flash.js';
import { streamLayoutOf } from '../../writer/stream-layout.js';
import { alignUp } from '../../writer/job-memory.js';
import { markerPositions } from '../../writer/capacity-markers.js';
import { SkipInbox } from '../../writer/skip-inbox.js';
import { subtractExtents, type Extent } from '../../common/domain/extents.js';
import type { WriteTarget } from '../../writer/write-target.js';

/** What O_DIRECT asks of a buffer's address: page-aligned is what the job memory promises. */
const PAGE = 4 * KiB;
/** What the disk holds before the job: any byte left so afterwards was never written. */
const UNTOUCHED = 0xee;

type Event =
  { kind: 'write' | 'read'; position: number; length: number; zeros?: boolean } | { kind: 'sync' } | { kind: 'close' };

/** A disk in memory that refuses, as a test failure, any request a real device would refuse or a safe writer would not make. */
class MemoryDisk implements WriteTarget {
  readonly optimalIoSize = 0;
  readonly bytes: Buffer;
  readonly events: Event[] = [];
  readonly problems: string[] = [];
  private corrupted = false;

  constructor(
    readonly path: string,
    readonly blockSize: number,
    readonly capacity: number,
    /** Where the image ends: the only place a request may end inside a block. */
    private readonly imageEnd: number,
    /** Flips this byte as it is stored, like a card that keeps the wrong data. */
    private readonly corruptAt: number | null = null,
    /** Flips it only the first time it is written, like a card with a weak cell. */
    private readonly corruptOnce = false,
  ) {
    this.bytes = Buffer.alloc(capacity, UNTOUCHED);
  }

  private check(kind: string, buffer: Buffer, offset: number, length: number, position: number): void {
    const where = `${kind} of ${length} bytes at ${position}`;
    if (position % this.blockSize !== 0) this.problems.push(`${where}: offset not a multiple of ${this.blockSize}`);
    if ((buffer.byteOffset + offset) % PAGE !== 0)
      this.problems.push(`${where}: buffer address ${buffer.byteOffset + offset} not page-aligned`);
    if (length % this.blockSize !== 0 && position + length !== this.imageEnd)
      this.problems.push(`${where}: length not whole blocks, and not the image's end`);
    if (position + length > this.capacity) this.problems.push(`${where}: past the disk's end`);
  }

  async write(buffer: Buffer, offset: number, length: number, position: number): Promise<void> {
    this.check('write', buffer, offset, length, position);
    const data = buffer.subarray(offset, offset + length);
    this.events.push({ kind: 'write', position, length, zeros: data.every((b) => b === 0) });
    data.copy(this.bytes, position);
    const flip = this.corruptAt;
    if (flip !== null && flip >= position && flip < position + length && !(this.corruptOnce && this.corrupted)) {
      this.bytes[flip] = (this.bytes[flip] ?? 0) ^ 0x01;
      this.corrupted = true;
    }
  }

  async read(buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    this.check('read', buffer, offset, length, position);
    this.events.push({ kind: 'read', position, length });
    return this.bytes.copy(buffer, offset, position, Math.min(this.capacity, position + length));
  }

  async sync(): Promise<void> {
    this.events.push({ kind: 'sync' });
  }

  async close(): Promise<void> {
    this.events.push({ kind: 'close' });
  }
}

const scratch = mkdtempSync(join(tmpdir(), 'sluice-memory-target-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Writes `image` to `disks` through the writer, verifying, reading the image from a file as the helper reads fd 0. */
async function writeImage(image: Buffer, disks: MemoryDisk[], chunkSize?: number): Promise<TargetResult[]> {
  const file = join(scratch, `image-${image.length}-${disks.length}-${chunkSize ?? 0}.img`);
  writeFileSync(file, image);
  const fd = openSync(file, 'r');
  try {
    const job = { source: fd, imageSize: image.length, sourceSeekable: true, verify: true, chunkSize };
    const results = await writeTargets(job, streamLayoutOf(job), disks);
    return disks.map((d) => results.get(d.path) ?? { status: 'cancelled', target: d.path, bytes: 0 });
  } finally {
    closeSync(fd);
  }
}

const SIZES = [1, 511, 512, 4095, 4096 + 1, HEAD_BYTES - 1, HEAD_BYTES, HEAD_BYTES + 1, 3 * MiB + 12_345, 9 * MiB + 7];

describe('the writer against an in-memory disk', () => {
  for (const blockSize of [512, 4096]) {
    for (const size of SIZES) {
      for (const chunkSize of [1 * MiB, 4 * MiB]) {
        it(`${size} bytes, ${blockSize}-byte blocks, ${chunkSize / MiB} MiB requests: aligned requests, head blanked first and written last, nothing past the image touched but the capacity markers`, async () => {
          const image = randomBytes(size);
          const capacity = alignUp(size, blockSize) + 64 * KiB;
          const disk = new MemoryDisk('/dev/memory0', blockSize, capacity, size);
          const [result] = await writeImage(image, [disk], chunkSize);
          expect(disk.problems).toEqual([]);
          expect(result).toMatchObject({ status: 'ok', bytes: size, verified: true });
          expect(disk.bytes.subarray(0, size).equals(image)).toBe(true);
          // Past the image: one marker block at each of the capacity check's places, nothing else.
          const markers = markerPositions(size, capacity, blockSize);
          expect(markers.length).toBeGreaterThan(0);
          for (const p of markers) expect(disk.bytes.subarray(p, p + 16).toString('latin1')).toBe('SLUICE-CAPACITY1');
          const past = Buffer.from(disk.bytes.subarray(size));
          for (const p of markers) past.fill(UNTOUCHED, p - size, p - size + blockSize);
          expect(past.every((b) => b === UNTOUCHED)).toBe(true);
          expect(
            disk.events
              .filter((e) => e.kind === 'write' && e.position >= size)
              .every((e) => 'length' in e && e.length === blockSize && markers.includes(e.position)),
          ).toBe(true);

          const writes = disk.events.filter((e) => e.kind === 'write');
          const headEnd = Math.min(size, HEAD_BYTES);
          // The partition tables' megabyte is blanked before anything else, where it has whole blocks.
          if (headEnd >= blockSize)
            expect(writes[0]).toMatchObject({ position: 0, length: headEnd - (headEnd % blockSize), zeros: true });
          // ...and its real bytes are the last write, after everything else is on the disk.
          expect(writes.at(-1)).toMatchObject({ position: 0, length: headEnd });
          const lastWrite = disk.events.lastIndexOf(writes.at(-1)!);
          expect(disk.events.slice(lastWrite + 1).find((e) => e.kind === 'sync')).toBeDefined();
          // Verification reads everything back after the last write and its sync.
          const reads = disk.events.slice(lastWrite).filter((e) => e.kind === 'read' && e.position < size);
          expect(reads.reduce((sum, e) => sum + ('length' in e ? Math.min(e.length, size - e.position) : 0), 0)).toBe(
            size,
          );
        });
      }
    }
  }

  it('writes two disks of different block sizes at once, each request aligned for its own disk', async () => {
    const size = 5 * MiB + 333;
    const image = randomBytes(size);
    const disks = [
      new MemoryDisk('/dev/memory512', 512, 8 * MiB, size),
      new MemoryDisk('/dev/memory4k', 4096, 8 * MiB, size),
    ];
    const results = await writeImage(image, disks);
    for (const disk of disks) {
      expect(disk.problems).toEqual([]);
      expect(disk.bytes.subarray(0, size).equals(image)).toBe(true);
    }
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok']);
  });

  it('a byte the disk flips every time it is written fails after the repair’s rounds, naming the exact byte, on that disk only', async () => {
    const size = 6 * MiB + 100;
    const image = randomBytes(size);
    const flipped = 4 * MiB + 4097;
    const disks = [
      new MemoryDisk('/dev/good', 512, 8 * MiB, size),
      new MemoryDisk('/dev/bad', 512, 8 * MiB, size, flipped),
    ];
    const [good, bad] = await writeImage(image, disks);
    expect(good).toMatchObject({ status: 'ok', verified: true });
    expect(good).not.toHaveProperty('repaired');
    expect(bad).toMatchObject({ status: 'failed', code: 'verify-mismatch', offset: flipped, badBlocks: 1 });
    expect(bad?.status === 'failed' ? bad.message : '').toContain(
      `keeps corrupting the block at byte offset ${flipped}`,
    );
    // The first write and three rewrites of the bad block's grain, each read back.
    const grainWrites =
      disks[1]?.events.filter((e) => e.kind === 'write' && e.position <= flipped && flipped < e.position + e.length) ??
      [];
    expect(grainWrites.length).toBe(4);
  });

  it('a byte the disk flips only the first time is repaired: only its block is written again, and the flash is green', async () => {
    const size = 6 * MiB + 100;
    const image = randomBytes(size);
    const flipped = 4 * MiB + 4097;
    const disk = new MemoryDisk('/dev/weak', 512, 8 * MiB, size, flipped, true);
    const [result] = await writeImage(image, [disk]);
    expect(result).toMatchObject({ status: 'ok', verified: true, repaired: { blocks: 1, offsets: [4 * MiB] } });
    expect(disk.bytes.subarray(0, size).equals(image)).toBe(true);
    const afterVerify = disk.events.slice(disk.events.findIndex((e) => e.kind === 'read' && e.position === 0));
    const rewrites = afterVerify.filter((e) => e.kind === 'write');
    expect(rewrites).toEqual([{ kind: 'write', position: 4 * MiB, length: 256 * KiB, zeros: false }]);
  });

  /**
   * A stream that leaves `skipped` out, as a decoder does once the helper took its skip message:
   * the file holds only the kept bytes, read front to back as a pipe is. Each skip is delivered
   * as the helper delivers it; a refused one stops the job as the helper does (abort).
   */
  async function writeLeavingOut(
    image: Buffer,
    disk: MemoryDisk,
    skipped: Extent[][],
  ): Promise<TargetResult | undefined> {
    const kept = subtractExtents([[0, image.length]], skipped.flat());
    const file = join(scratch, `left-out-${image.length}.img`);
    writeFileSync(file, Buffer.concat(kept.map(([offset, length]) => image.subarray(offset, offset + length))));
    const fd = openSync(file, 'r');
    const skips = new SkipInbox();
    const controller = new AbortController();
    for (const extents of skipped) skips.deliver(extents).catch(() => controller.abort());
    try {
      const job = {
        source: fd,
        imageSize: image.length,
        sourceSeekable: false,
        verify: true,
        skips,
        signal: controller.signal,
      };
      return (await writeTargets(job, streamLayoutOf(job), [disk])).get(disk.path);
    } finally {
      closeSync(fd);
    }
  }

  it('ranges a stream leaves out are neither written nor read back, the rest lands in place, and the result counts them', async () => {
    const size = 6 * MiB + 100;
    const image = randomBytes(size);
    const disk = new MemoryDisk('/dev/memory0', 512, 8 * MiB, size);
    const skipped: Extent[][] = [
      [[2 * MiB, MiB]],
      [
        [4 * MiB + 4 * KiB, 8 * KiB],
        [5 * MiB, 64 * KiB],
      ],
    ];
    const result = await writeLeavingOut(image, disk, skipped);
    expect(disk.problems).toEqual([]);
    expect(result).toMatchObject({
      status: 'ok',
      verified: true,
      bytes: size - MiB - 72 * KiB,
      skipped: MiB + 72 * KiB,
    });
    for (const [offset, length] of skipped.flat()) {
      expect(disk.bytes.subarray(offset, offset + length).every((b) => b === UNTOUCHED)).toBe(true);
      expect(
        disk.events.some(
          (e) =>
            e.kind !== 'sync' && e.kind !== 'close' && e.position < offset + length && e.position + e.length > offset,
        ),
      ).toBe(false);
    }
    for (const [offset, length] of subtractExtents([[0, size]], skipped.flat()))
      expect(disk.bytes.subarray(offset, offset + length).equals(image.subarray(offset, offset + length))).toBe(true);
  });

  it('a range the job cannot leave out (not aligned) fails it as a protocol error, not as a cancel, and the head is never written', async () => {
    const size = 4 * MiB;
    const image = randomBytes(size);
    const disk = new MemoryDisk('/dev/memory0', 512, 8 * MiB, size);
    const result = await writeLeavingOut(image, disk, [[[2 * MiB + 1, 4 * KiB]]]);
    expect(result).toMatchObject({ status: 'failed', code: 'protocol-error' });
    expect(disk.bytes.subarray(0, 512).equals(image.subarray(0, 512))).toBe(false);
  });
});
