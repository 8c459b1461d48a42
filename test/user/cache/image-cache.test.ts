import {
  statfsSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ImageCache } from '../../../user/cache/image-cache.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-cache-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const key = (n: number) => n.toString(16).padStart(64, '0');
const entry = (n: number, size: number) => ({
  key: key(n),
  name: `OS ${n}`,
  url: `https://x/${n}.img.xz`,
  size,
  checks: 'download' as const,
});

/** Reserves room for entry `n` and completes its download with `size` bytes, as a flash would. */
async function fill(cache: ImageCache, n: number, size: number): Promise<void> {
  const room = await cache.reserve(entry(n, size));
  if ('refused' in room) throw new Error(room.refused);
  writeFileSync(room.tee.partial, Buffer.alloc(size, n));
  await (await import('node:fs/promises')).rename(room.tee.partial, room.tee.complete);
}

describe('ImageCache: downloads kept by SHA-256, least recently used out first', () => {
  it('finds a complete download by its key and lists what it holds, partial ones too', async () => {
    const cache = new ImageCache(dir, 1000);
    await fill(cache, 1, 100);
    const room = await cache.reserve(entry(2, 300));
    if ('refused' in room) throw new Error(room.refused);
    writeFileSync(room.tee.partial, Buffer.alloc(120));
    expect(await cache.find(key(1))).toBe(join(dir, 'images', key(1)));
    expect(await cache.find(key(2))).toBeNull();
    expect(await cache.find('not a key')).toBeNull();
    expect((await cache.entries()).map((e) => [e.name, e.complete, e.bytes, e.size])).toEqual(
      expect.arrayContaining([
        ['OS 1', true, 100, 100],
        ['OS 2', false, 120, 300],
      ]),
    );
  });

  it('evicts the least recently used entries, and only as many as the limit needs', async () => {
    const cache = new ImageCache(dir, 1000);
    for (const n of [1, 2, 3]) {
      await fill(cache, n, 300);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // Using 1 makes 2 the least recently used.
    await cache.find(key(1));
    const room = await cache.reserve(entry(4, 300));
    expect('evicted' in room && room.evicted.map((e) => e.name)).toEqual(['OS 2']);
    expect(existsSync(join(dir, 'images', key(2)))).toBe(false);
    expect((await cache.entries()).map((e) => e.name).sort()).toEqual(['OS 1', 'OS 3']);
  });

  it('counts a partial download of the same entry as already there', async () => {
    const cache = new ImageCache(dir, 1000);
    await fill(cache, 1, 400);
    const first = await cache.reserve(entry(2, 700));
    expect('evicted' in first && first.evicted.map((e) => e.name)).toEqual(['OS 1']);
    if ('refused' in first) throw new Error(first.refused);
    writeFileSync(first.tee.partial, Buffer.alloc(500));
    await fill(cache, 3, 100);
    // 500 of 700 bytes are there: 200 more fit beside OS 3 without evicting it.
    const again = await cache.reserve(entry(2, 700));
    expect('evicted' in again && again.evicted).toEqual([]);
  });

  it('refuses a download larger than the limit, or one that would leave less than the reserve free, evicting nothing', async () => {
    const small = new ImageCache(dir, 1000);
    await fill(small, 1, 500);
    expect(await small.reserve(entry(2, 1001))).toEqual({
      refused: "it is 1.0 KB, more than the cache's limit of 1.0 KB",
    });
    const { bavail, bsize } = statfsSync(dir);
    const tight = new ImageCache(dir, 10 ** 15, bavail * bsize + 1000);
    expect(await tight.reserve(entry(3, 100))).toEqual({
      refused: expect.stringMatching(/^keeping it would leave less than .* free on the disk that holds the cache/),
    });
    expect(await small.find(key(1))).not.toBeNull();
  });

  it('remembers when an entry was used across instances, and falls back to the file time without a description', async () => {
    const cache = new ImageCache(dir, 1000);
    await fill(cache, 1, 10);
    await fill(cache, 2, 10);
    rmSync(join(dir, 'images', `${key(2)}.json`));
    utimesSync(join(dir, 'images', key(2)), new Date(1000), new Date(1000));
    writeFileSync(join(dir, 'images', `${key(1)}.json`), '{"broken":');
    const listed = await new ImageCache(dir).entries();
    expect(listed.map((e) => [e.key, e.name, e.lastUsed > 1_000_000 ? 'recent' : 'old'])).toEqual([
      [key(1), null, 'recent'],
      [key(2), null, 'old'],
    ]);
  });

  it('clears its own entries and leaves other files alone', async () => {
    const cache = new ImageCache(dir, 1000);
    await fill(cache, 1, 10);
    writeFileSync(join(dir, 'images', 'notes.txt'), 'mine');
    expect(await cache.clear()).toEqual({ entries: 1, bytes: 10 });
    expect(await cache.entries()).toEqual([]);
    expect(readFileSync(join(dir, 'images', 'notes.txt'), 'utf8')).toBe('mine');
  });
});

describe('ImageCache: a cache folder that is a symbolic link', () => {
  it('is refused with the reason, for a download and for a decoded copy, and nothing is made where it leads', async () => {
    const aim = join(dir, 'elsewhere');
    const link = join(dir, 'cache');
    symlinkSync(aim, link);
    const cache = new ImageCache(link, 1000);
    const sentence = `${link} is a symbolic link, and the image cache is kept only in a real folder`;
    expect(await cache.reserve(entry(1, 100))).toEqual({ refused: expect.stringContaining(sentence) });
    expect(await cache.decodedCopy(100)).toEqual({ refused: expect.stringContaining(sentence) });
    expect(existsSync(aim)).toBe(false);
  });

  it('its images folder as a link is refused the same way', async () => {
    const aim = join(dir, 'elsewhere');
    mkdirSync(join(dir, 'cache'));
    symlinkSync(aim, join(dir, 'cache', 'images'));
    const room = await new ImageCache(join(dir, 'cache'), 1000).reserve(entry(1, 100));
    expect(room).toEqual({ refused: expect.stringContaining(`${join(dir, 'cache', 'images')} is a symbolic link`) });
    expect(existsSync(aim)).toBe(false);
  });
});

describe('ImageCache: a cache folder that cannot be made', () => {
  it('is refused with the system’s reason in a sentence, for a download and for a decoded copy', async () => {
    writeFileSync(join(dir, 'file'), 'not a folder');
    const cache = new ImageCache(join(dir, 'file', 'cache'), 1000);
    const sentence = `the image cache folder ${join(dir, 'file', 'cache', 'images')} cannot be made (ENOTDIR: not a directory`;
    expect(await cache.reserve(entry(1, 100))).toEqual({ refused: expect.stringContaining(sentence) });
    expect(await cache.decodedCopy(100)).toEqual({ refused: expect.stringContaining(sentence) });
  });
});

describe('ImageCache: a station’s decoded image', () => {
  it('is begun by one station at a time: a second of the same image is refused, not given the same part', async () => {
    const cache = new ImageCache(dir, 1024 * 1024);
    const decoded = { ...entry(7, 4096), checks: 'image' as const };
    const first = await cache.decodedImage(decoded);
    if (!('write' in first)) throw new Error('the first station got no part');
    const second = await cache.decodedImage(decoded);
    expect(second).toEqual({ refused: expect.stringMatching(/another station is decoding this image/) });
    const { writeSync, closeSync } = await import('node:fs');
    writeSync(first.write, Buffer.alloc(4096, 7));
    closeSync(first.write);
    const path = await first.complete();
    expect(readFileSync(path)).toEqual(Buffer.alloc(4096, 7));
    expect(await cache.decodedImage(decoded)).toEqual({ found: path });
  });
});
