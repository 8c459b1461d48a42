/**
 * The image cache: downloads of catalogue entries kept by their SHA-256, so that a classroom
 * downloads an OS once and every later flash of it reads the local copy, with or without a
 * network. Raspberry Pi Imager keeps one file and overwrites it each time.
 *
 * In `<cache>/images/`: `<sha256>` is a complete download (its bytes were checked against that
 * SHA-256, or the decoded image against it when the catalogue gives no download checksum: see
 * `checks`), `<sha256>.part` a download that stopped part-way (resumed from where it stopped by
 * the next try: user/images/http/download.ts), and `<sha256>.json` what it is and when it was last
 * used. The cache stays under its size limit and never leaves less than RESERVE_BYTES free on its
 * disk: the least recently used entries go first, and a download that would not fit is written
 * without being kept.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lchown, lstat, mkdir, readdir, rename, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import type { DownloadTee } from '../../common/contracts/decoder-protocol.js';
import { errorText } from '../../common/domain/error-details.js';
import { formatBytes } from '../../common/domain/units.js';
import { invokingUser } from '../images/processes/image-child.js';
import { readSidecar } from '../images/files/sidecar-file.js';
import { closeFd, openFd, syncData } from '../../node/io.js';

/** The size limit when none is set: 20 GB, room for a few OS images (decimal, as the settings page shows it). */
export const DEFAULT_LIMIT_BYTES = 20_000_000_000;

/**
 * Free space the cache never takes: 5 GB. SLUICE_CACHE_RESERVE_BYTES replaces it, for tests only
 * (the rule is then tested on a small tmpfs).
 */
export const RESERVE_BYTES = reserveOverride(process.env['SLUICE_CACHE_RESERVE_BYTES']) ?? 5_000_000_000;

function reserveOverride(value: string | undefined): number | null {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : null;
}

/** What an entry's SHA-256 is of: the download as stored, or the image once decompressed. */
export type CacheChecks = 'download' | 'image';

const KEY = /^[0-9a-f]{64}$/;

const MetaSchema = v.object({
  name: v.pipe(v.string(), v.maxLength(256)),
  url: v.pipe(v.string(), v.maxLength(4096)),
  size: v.pipe(v.number(), v.integer(), v.minValue(0)),
  checks: v.picklist(['download', 'image']),
  lastUsed: v.number(),
});
type Meta = v.InferOutput<typeof MetaSchema>;

/** One entry of the cache, complete or part-way. */
export interface CachedImage {
  /** The SHA-256 it is kept by (see `checks`). */
  key: string;
  /** The catalogue entry's name and address; null when its description was lost. */
  name: string | null;
  url: string | null;
  checks: CacheChecks | null;
  complete: boolean;
  /** Bytes on disk now. */
  bytes: number;
  /** Bytes of the whole download, as the catalogue gives it; null when unknown. */
  size: number | null;
  /** When a flash last used it (ms since the epoch); the file's time when unknown. */
  lastUsed: number;
}

/** What a download to be cached is. */
export interface CacheEntry {
  key: string;
  name: string;
  url: string;
  /** Bytes of the whole download. */
  size: number;
  checks: CacheChecks;
}

/**
 * Files and folders made here belong to the person flashing, also when the app runs as root
 * under sudo (the command line runs as that person then: cli/broker.ts). lchown: root never
 * follows a link to hand its target over.
 */
async function giveToUser(path: string): Promise<void> {
  const user = invokingUser();
  if (user !== null) await lchown(path, user.uid, user.gid);
}

/** Why `path` may not be (part of) the cache: a symbolic link could lead its writes anywhere. Null when it is a folder or not there yet. */
async function linkRefusal(path: string): Promise<string | null> {
  const st = await lstat(path).catch(() => null);
  if (st === null || !st.isSymbolicLink()) return null;
  return `${path} is a symbolic link, and the image cache is kept only in a real folder (remove the link, or set SLUICE_CACHE_DIR to a folder)`;
}

async function sizeOf(path: string): Promise<{ bytes: number; mtimeMs: number } | null> {
  try {
    const st = await stat(path);
    return st.isFile() ? { bytes: st.size, mtimeMs: st.mtimeMs } : null;
  } catch {
    return null;
  }
}

export class ImageCache {
  readonly images: string;

  constructor(
    readonly dir: string,
    readonly limitBytes: number = DEFAULT_LIMIT_BYTES,
    readonly reserveBytes: number = RESERVE_BYTES,
  ) {
    this.images = join(dir, 'images');
  }

  /**
   * Makes the cache's folders, unless one of them is a symbolic link or cannot be made (a folder
   * the person flashing may not write, also under sudo): then says why not.
   */
  private async makeFolders(): Promise<string | null> {
    const refused = (await linkRefusal(this.dir)) ?? (await linkRefusal(this.images));
    if (refused !== null) return refused;
    try {
      await mkdir(this.images, { recursive: true });
    } catch (error) {
      return `the image cache folder ${this.images} cannot be made (${errorText(error)}); set SLUICE_CACHE_DIR to a folder you may write`;
    }
    await giveToUser(this.dir).catch(() => undefined);
    await giveToUser(this.images).catch(() => undefined);
    return null;
  }

  private path(key: string, suffix = ''): string {
    return join(this.images, `${key}${suffix}`);
  }

  private async meta(key: string): Promise<Meta | null> {
    const bytes = await readSidecar(this.path(key, '.json'), 64 * 1024, 'A cache entry’s description').catch(
      () => null,
    );
    if (bytes === null) return null;
    try {
      const parsed = v.safeParse(MetaSchema, JSON.parse(bytes.toString('utf8')));
      return parsed.success ? parsed.output : null;
    } catch {
      return null;
    }
  }

  private async writeMeta(key: string, meta: Meta): Promise<void> {
    const file = this.path(key, '.json');
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(meta)}\n`);
    await giveToUser(temporary);
    await rename(temporary, file);
  }

  /** Every entry, complete or part-way, the most recently used first. */
  async entries(): Promise<CachedImage[]> {
    let names: string[];
    try {
      names = await readdir(this.images);
    } catch {
      return [];
    }
    const keys = new Set(names.map((name) => name.slice(0, 64)).filter((key) => KEY.test(key)));
    const found: CachedImage[] = [];
    for (const key of keys) {
      const [meta, complete, partial] = await Promise.all([
        this.meta(key),
        sizeOf(this.path(key)),
        sizeOf(this.path(key, '.part')),
      ]);
      const file = complete ?? partial;
      if (file === null) continue;
      found.push({
        key,
        name: meta?.name ?? null,
        url: meta?.url ?? null,
        checks: meta?.checks ?? null,
        complete: complete !== null,
        bytes: (complete?.bytes ?? 0) + (partial?.bytes ?? 0),
        size: meta?.size ?? null,
        lastUsed: meta?.lastUsed ?? file.mtimeMs,
      });
    }
    return found.sort((a, b) => b.lastUsed - a.lastUsed);
  }

  /** The complete download kept by `key`, marked as used now; null when there is none. */
  async find(key: string): Promise<string | null> {
    if (!KEY.test(key)) return null;
    const file = this.path(key);
    if ((await sizeOf(file)) === null) return null;
    const meta = await this.meta(key);
    if (meta !== null) await this.writeMeta(key, { ...meta, lastUsed: Date.now() }).catch(() => undefined);
    return file;
  }

  /**
   * Makes room for `entry` and says where its download goes: evicts the least recently used
   * entries while the cache would pass its limit or leave less than the reserve free. Refuses,
   * with the reason, when even an empty cache could not hold it; nothing is evicted then.
   */
  async reserve(entry: CacheEntry): Promise<{ tee: DownloadTee; evicted: CachedImage[] } | { refused: string }> {
    if (!KEY.test(entry.key)) return { refused: `its SHA-256 ${entry.key} is not one` };
    if (entry.size > this.limitBytes)
      return {
        refused: `it is ${formatBytes(entry.size)}, more than the cache's limit of ${formatBytes(this.limitBytes)}`,
      };
    const refused = await this.makeFolders();
    if (refused !== null) return { refused };
    const all = await this.entries();
    const own = all.find((e) => e.key === entry.key);
    const others = all.filter((e) => e.key !== entry.key).reverse();
    const need = Math.max(0, entry.size - (own?.bytes ?? 0));
    let used = all.reduce((sum, e) => sum + e.bytes, 0);
    const { bavail, bsize } = await statfs(this.images);
    let free = bavail * bsize;
    const evictable = others.reduce((sum, e) => sum + e.bytes, 0);
    if (free + evictable - need < this.reserveBytes) {
      return {
        refused: `keeping it would leave less than ${formatBytes(this.reserveBytes)} free on the disk that holds the cache (${this.dir})`,
      };
    }
    const evicted: CachedImage[] = [];
    for (const oldest of others) {
      if (used + need <= this.limitBytes && free - need >= this.reserveBytes) break;
      await this.remove(oldest.key);
      evicted.push(oldest);
      used -= oldest.bytes;
      free += oldest.bytes;
    }
    await this.writeMeta(entry.key, {
      name: entry.name,
      url: entry.url,
      size: entry.size,
      checks: entry.checks,
      lastUsed: Date.now(),
    });
    return { tee: { partial: this.path(entry.key, '.part'), complete: this.path(entry.key) }, evicted };
  }

  /**
   * A batch's one decoded copy of its image, of at most `bytes` (user/images/feed/source-feed.ts):
   * opened for writing and for reading. It counts against the cache's limit and the disk's reserve
   * like a download, but is never kept: refused, with the reason, where it would not fit (the batch
   * then streams, as one card does). Its name is removed at once, so that it is gone when the batch
   * ends however it ends, a crash included.
   */
  async decodedCopy(bytes: number): Promise<{ write: number; read: number } | { refused: string }> {
    const refused = await this.makeFolders();
    if (refused !== null) return { refused };
    const used = (await this.entries()).reduce((sum, e) => sum + e.bytes, 0);
    if (used + bytes > this.limitBytes)
      return {
        refused: `the cache holds ${formatBytes(used)}, and ${formatBytes(bytes)} more would pass its limit of ${formatBytes(this.limitBytes)}`,
      };
    const { bavail, bsize } = await statfs(this.images);
    if (bavail * bsize - bytes < this.reserveBytes)
      return {
        refused: `${formatBytes(bytes)} would leave less than ${formatBytes(this.reserveBytes)} free on the disk that holds the cache (${this.dir})`,
      };
    const path = join(this.images, `decoded-${process.pid}-${randomBytes(8).toString('hex')}.img`);
    const write = await openFd(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      await giveToUser(path);
      return { write, read: await openFd(path, constants.O_RDONLY) };
    } catch (error) {
      await closeFd(write);
      throw error;
    } finally {
      await rm(path, { force: true });
    }
  }

  /**
   * A station's decoded image, kept by `entry.key` like a download, so that it outlives a crash:
   * the complete copy when there is one (kept on purpose, or left by a station that never stopped),
   * marked as used now; else room made for it as for a download (the least recently used entries
   * go first) and its `.part` opened for writing, from its start: a part left by a decoding that
   * stopped is begun again, since reaching its end would mean decoding all of it again anyway (a
   * compressed stream is read from its start). `complete` gives it its name once the decoder has
   * written all of it. Refused, with the reason, where it would not fit.
   */
  async decodedImage(
    entry: CacheEntry,
  ): Promise<{ found: string } | { write: number; complete(): Promise<string> } | { refused: string }> {
    const found = await this.find(entry.key);
    if (found !== null) return { found };
    const reserved = await this.reserve(entry);
    if ('refused' in reserved) return reserved;
    const { partial, complete } = reserved.tee;
    // Exclusive: a second station of the same image must not truncate the part the first is still
    // writing (and verifying against); it decodes for each card instead.
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    let write: number;
    try {
      write = await openFd(partial, flags, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return {
        refused: `another station is decoding this image into the cache, or one stopped part-way (sluice cache clear removes its part)`,
      };
    }
    await giveToUser(partial).catch(() => undefined);
    return {
      write,
      complete: async () => {
        // Its name says "complete" only once its bytes are on the disk: a later station trusts it.
        const synced = await openFd(partial, constants.O_RDONLY | constants.O_NOFOLLOW);
        await syncData(synced).finally(() => closeFd(synced));
        await rename(partial, complete);
        return complete;
      },
    };
  }

  /** Deletes one entry: its download, complete or part-way, and its description. */
  async remove(key: string): Promise<void> {
    if (!KEY.test(key)) return;
    await Promise.all(['', '.part', '.json'].map((suffix) => rm(this.path(key, suffix), { force: true })));
  }

  /** Deletes every entry; files the cache did not make are left alone. Returns what went. */
  async clear(): Promise<{ entries: number; bytes: number }> {
    const all = await this.entries();
    for (const entry of all) await this.remove(entry.key);
    return { entries: all.length, bytes: all.reduce((sum, e) => sum + e.bytes, 0) };
  }
}
