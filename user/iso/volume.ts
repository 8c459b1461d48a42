/**
 * The file tree of an optical-disc image (ISO 9660 or UDF), as iso9660.ts and udf.ts read it: one
 * shape, so the probe's classification and the installer stick's builder do not care which. Every
 * reader is bounded by the image, not by what its directories claim: a name that is not a plain
 * name, a directory met twice, a file past the image's end or more entries than a disc can hold
 * stop the reading with a sentence.
 */
import { jobError } from '../../common/domain/failure.js';
import type { ReadAt } from '../../node/read-at.js';

/** ISO 9660 and UDF as optical media use them: 2048-byte sectors. */
export const SECTOR = 2048;

/** Where a file's bytes lie in the image: byte offset and length, in order. */
export type ByteExtent = [offset: number, length: number];

export interface DiscEntry {
  /** The long name (Rock Ridge, Joliet or UDF), as the file's own directory has it. */
  name: string;
  directory: boolean;
  /** Bytes of the file (of a directory: of its records). */
  size: number;
  /** Where its bytes lie; `inline` instead for a UDF file small enough to live in its own entry. */
  extents: ByteExtent[];
  inline: Buffer | null;
  /**
   * Where the entry itself lies (UDF: its file entry; ISO 9660: its records), the byte offset a
   * directory loop is known by: a UDF folder whose records live in its own entry has no extents.
   */
  place: number;
}

/** A file system of a disc image, as a tree read directory by directory. */
export interface DiscVolume {
  kind: 'iso9660' | 'udf';
  root: DiscEntry;
  /** The entries of a directory, without "." and "..". */
  list(directory: DiscEntry): Promise<DiscEntry[]>;
}

/**
 * Entries of all directories read through one volume, past which it is refused: a Windows 11 ISO
 * holds about 1,000 files, a full Debian DVD about 5,000 packages; a hostile directory claiming a
 * million entries is refused after this many, within a few MB of memory.
 */
export const MAX_ENTRIES = 200_000;

/** A directory's records, past which it is refused (a UDF directory of 100,000 entries is about 6 MB). */
export const MAX_DIRECTORY_BYTES = 16 * 1024 * 1024;

/** A name a FAT volume and every OS can take as one path component. */
export function checkedName(name: string, image: string): string {
  if (name === '' || name === '.' || name === '..' || /[/\\\0]/.test(name)) {
    throw jobError(
      'source-corrupt',
      `${image} holds a file named ${JSON.stringify(name)}, which is not a plain file name (a name with / or .. could write outside its folder). Sluice does not copy it.`,
    );
  }
  return name;
}

/** Checks that a file's bytes lie inside the image. */
export function checkedExtent(
  offset: number,
  length: number,
  imageSize: number,
  image: string,
  name: string,
): ByteExtent {
  if (!Number.isSafeInteger(offset + length) || offset + length > imageSize) {
    throw jobError(
      'source-truncated',
      `${image} is cut short or damaged: ${name} claims ${length} bytes at byte ${offset}, past the image's end at ${imageSize}.`,
    );
  }
  return [offset, length];
}

/** Reads exactly `length` bytes, or says the image ends early. */
export async function readExactly(readAt: ReadAt, offset: number, length: number, image: string): Promise<Buffer> {
  const bytes = await readAt(offset, length);
  if (bytes.length < length)
    throw jobError(
      'source-truncated',
      `${image} is cut short: it ends at byte ${offset + bytes.length}, where ${length} bytes of its file system were expected at byte ${offset}.`,
    );
  return bytes;
}

/** Counts entries and directories read through one volume, refusing a loop or an endless tree. */
export class WalkGuard {
  private entries = 0;
  private readonly seen = new Set<number>();

  constructor(private readonly image: string) {}

  directory(offset: number): void {
    if (this.seen.has(offset))
      throw jobError(
        'source-corrupt',
        `${this.image} is damaged: a directory at byte ${offset} contains itself (a directory loop).`,
      );
    this.seen.add(offset);
  }

  entry(): void {
    this.entries += 1;
    if (this.entries > MAX_ENTRIES)
      throw jobError(
        'source-corrupt',
        `${this.image} claims more than ${MAX_ENTRIES} files and folders, more than any installer disc holds; Sluice stops reading it.`,
      );
  }
}

/** The entry at a path of names (compared without case, as FAT and Windows Setup do), or null. */
export async function findPath(volume: DiscVolume, path: readonly string[]): Promise<DiscEntry | null> {
  let at: DiscEntry = volume.root;
  for (const name of path) {
    if (!at.directory) return null;
    const found = (await volume.list(at)).find((entry) => entry.name.toLowerCase() === name.toLowerCase());
    if (found === undefined) return null;
    at = found;
  }
  return at;
}
