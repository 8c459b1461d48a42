import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { StreamRing, type StreamRead } from '../../writer/stream-ring.js';

const SLOT = 4096;
const FROM = 1000;

/** A stream of `bytes` read in order, which counts its reads; offsets are stream offsets from FROM. */
function streamOf(bytes: Buffer): { fill: StreamRead; reread: StreamRead; fills: () => number } {
  let fills = 0;
  const copyAt = (into: Buffer, length: number, at: number) =>
    bytes.copy(into, 0, at - FROM, Math.min(bytes.length, at - FROM + length));
  return {
    fill: (into, length, at) => {
      fills += 1;
      return Promise.resolve(copyAt(into, length, at));
    },
    reread: (into, length, at) => Promise.resolve(copyAt(into, length, at)),
    fills: () => fills,
  };
}

/** Reads the whole stream through `read`, slot by slot; `pause` runs before each read. */
async function drain(
  read: StreamRead,
  pause: (at: number) => Promise<void> = () => Promise.resolve(),
): Promise<Buffer> {
  const parts: Buffer[] = [];
  const into = Buffer.alloc(SLOT);
  for (let at = FROM; ;) {
    await pause(at);
    const n = await read(into, SLOT, at);
    if (n === 0) break;
    parts.push(Buffer.from(into.subarray(0, n)));
    at += n;
    if (n < SLOT) break;
  }
  return Buffer.concat(parts);
}

describe('the stream ring', () => {
  it('gives every reader the whole stream, read from the source once', async () => {
    const bytes = randomBytes(10 * SLOT + 123);
    const source = streamOf(bytes);
    const ring = new StreamRing(Buffer.alloc(3 * SLOT), SLOT, FROM, source.fill, null);
    const readers = [ring.reader(), ring.reader(), ring.reader()];
    const got = await Promise.all(readers.map((r) => drain(r.read)));
    for (const g of got) expect(g.equals(bytes)).toBe(true);
    expect(source.fills()).toBe(11);
  });

  it('from a pipe, the fast reader waits for a stalled one at the ring’s length, and goes on once it moves', async () => {
    const bytes = randomBytes(8 * SLOT);
    const ring = new StreamRing(Buffer.alloc(2 * SLOT), SLOT, FROM, streamOf(bytes).fill, null);
    const slow = ring.reader();
    const fast = ring.reader();
    let fastAt = 0;
    let release!: () => void;
    const stalled = new Promise<void>((resolve) => (release = resolve));
    const slowDone = drain(slow.read, (at) => (at === FROM + SLOT ? stalled : Promise.resolve()));
    const fastDone = drain(fast.read, (at) => {
      fastAt = at;
      return Promise.resolve();
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The slow reader copied its first slot; the ring holds two: the fast one waits for the third.
    expect(fastAt).toBe(FROM + 3 * SLOT);
    release();
    expect((await fastDone).equals(bytes)).toBe(true);
    expect((await slowDone).equals(bytes)).toBe(true);
  });

  it('from a file, a stalled reader is let go to read the file again, and the fast one never waits for it', async () => {
    const bytes = randomBytes(8 * SLOT);
    const ring = new StreamRing(Buffer.alloc(2 * SLOT), SLOT, FROM, streamOf(bytes).fill, streamOf(bytes).reread);
    const slow = ring.reader();
    const fast = ring.reader();
    let release!: () => void;
    const stalled = new Promise<void>((resolve) => (release = resolve));
    const slowDone = drain(slow.read, (at) => (at === FROM + SLOT ? stalled : Promise.resolve()));
    expect((await drain(fast.read)).equals(bytes)).toBe(true);
    release();
    expect((await slowDone).equals(bytes)).toBe(true);
  });

  it('a reader let go that catches up reads on through the ring, never past what the source has given', async () => {
    const bytes = randomBytes(8 * SLOT);
    const source = streamOf(bytes);
    let filled = FROM;
    const fill: StreamRead = async (into, length, at) => {
      const n = await source.fill(into, length, at);
      filled = at + n;
      return n;
    };
    // A decoded copy that is still being written: it holds only what the ring's fill has read.
    const reread: StreamRead = (into, length, at) =>
      at + length > filled ? Promise.reject(new Error(`read past ${filled}`)) : source.reread(into, length, at);
    const ring = new StreamRing(Buffer.alloc(2 * SLOT), SLOT, FROM, fill, reread);
    const slow = ring.reader();
    const fast = ring.reader();
    let releaseSlow!: () => void;
    let releaseFast!: () => void;
    const slowStalled = new Promise<void>((resolve) => (releaseSlow = resolve));
    const fastStalled = new Promise<void>((resolve) => (releaseFast = resolve));
    const slowDone = drain(slow.read, (at) => (at === FROM + SLOT ? slowStalled : Promise.resolve()));
    const fastDone = drain(fast.read, (at) => (at === FROM + 5 * SLOT ? fastStalled : Promise.resolve()));
    await new Promise((resolve) => setTimeout(resolve, 20));
    releaseSlow();
    expect((await slowDone).equals(bytes)).toBe(true);
    releaseFast();
    expect((await fastDone).equals(bytes)).toBe(true);
    expect(source.fills()).toBe(9);
  });

  it('a reader that leaves frees what it held', async () => {
    const bytes = randomBytes(6 * SLOT);
    const ring = new StreamRing(Buffer.alloc(2 * SLOT), SLOT, FROM, streamOf(bytes).fill, null);
    const gone = ring.reader();
    const fast = ring.reader();
    await gone.read(Buffer.alloc(SLOT), SLOT, FROM);
    const done = drain(fast.read);
    await new Promise((resolve) => setTimeout(resolve, 10));
    gone.release();
    expect((await done).equals(bytes)).toBe(true);
  });

  it('a failure of the source reaches every reader', async () => {
    const ring = new StreamRing(
      Buffer.alloc(2 * SLOT),
      SLOT,
      FROM,
      () => Promise.reject(new Error('corrupt at 1000')),
      null,
    );
    const readers = [ring.reader(), ring.reader()];
    for (const r of readers) await expect(r.read(Buffer.alloc(SLOT), SLOT, FROM)).rejects.toThrow('corrupt at 1000');
  });
});
