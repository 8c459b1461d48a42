/**
 * An installer stick's FAT32 volume read back through a ReadAt over the drive (the helper sends
 * the ranges asked for): its folders, and where each file's clusters lie. Bounded by the volume,
 * not by what it claims: a file's chain is followed for the clusters its size needs and no more,
 * a folder for at most the FAT specification's 65,536 entries, and the FAT is read a window at a
 * time, so a 2 TiB stick's 256 MiB of FAT is never held.
 */
import { jobError } from '../../common/domain/failure.js';
import { mbrEntries } from '../images/formats/partition-table.js';
import type { ReadAt } from '../../node/read-at.js';
import { listDirectory, parseBootSector, type FatEntry, type FatGeometry } from '../customise/fat.js';
import type { ByteExtent } from '../iso/volume.js';

const FAT_WINDOW = 64 * 1024;
const MAX_FOLDER_BYTES = 65536 * 32;
const END_OF_CHAIN = 0x0ffffff8;

export class StickVolume {
  private window: { at: number; bytes: Buffer } | null = null;

  private constructor(
    private readonly readAt: ReadAt,
    /** The partition's byte offset on the drive. */
    private readonly offset: number,
    readonly geometry: FatGeometry,
    private readonly drive: string,
  ) {}

  /** The FAT32 volume of the drive's first partition; throws a sentence when there is none. */
  static async open(readAt: ReadAt, drive: string): Promise<StickVolume> {
    const [first] = mbrEntries(await readAt(0, 512));
    // The MBR counts in the drive's logical sectors: 512 bytes, or 4096 on a 4Kn drive.
    for (const sectorBytes of [512, 4096]) {
      if (first === undefined) break;
      const offset = first.firstSector * sectorBytes;
      const geometry = parseBootSector(await readAt(offset, 512), first.sectors * sectorBytes);
      if (geometry?.type === 32) return new StickVolume(readAt, offset, geometry, drive);
    }
    throw jobError(
      'verify-mismatch',
      `${drive} is not an installer stick: its first partition holds no FAT32 file system.`,
    );
  }

  /** The root folder's first cluster. */
  get root(): number {
    return this.geometry.rootCluster;
  }

  private checked(cluster: number, what: string): number {
    if (cluster < 2 || cluster > this.geometry.clusterCount + 1)
      throw jobError('verify-mismatch', `${this.drive}: ${what}'s clusters leave the volume (cluster ${cluster}).`);
    return cluster;
  }

  /** The FAT's entry for `cluster`, read through a window of the table. */
  private async next(cluster: number): Promise<number> {
    const byte = this.geometry.fatOffset + cluster * 4;
    const at = byte - (byte % FAT_WINDOW);
    if (this.window?.at !== at) this.window = { at, bytes: await this.readAt(this.offset + at, FAT_WINDOW) };
    const within = byte - at;
    if (within + 4 > this.window.bytes.length) return 0;
    return this.window.bytes.readUInt32LE(within) & 0x0fffffff;
  }

  private clusterAt(cluster: number): number {
    return this.offset + this.geometry.dataOffset + (cluster - 2) * this.geometry.clusterBytes;
  }

  /** Where the `bytes` bytes of the chain from `first` lie on the drive, in order. */
  async runs(first: number, bytes: number, what: string): Promise<ByteExtent[]> {
    const { clusterBytes } = this.geometry;
    const count = Math.ceil(bytes / clusterBytes);
    const runs: ByteExtent[] = [];
    let cluster = first;
    for (let i = 0; i < count; i++) {
      const at = this.clusterAt(this.checked(cluster, what));
      const last = runs.at(-1);
      if (last !== undefined && last[0] + last[1] === at) last[1] += clusterBytes;
      else runs.push([at, clusterBytes]);
      if (i < count - 1) cluster = await this.next(cluster);
    }
    const last = runs.at(-1);
    if (last !== undefined) last[1] -= count * clusterBytes - bytes;
    return runs;
  }

  /** The entries of the folder whose chain starts at `first`. */
  async list(first: number, what: string): Promise<FatEntry[]> {
    const pieces: Buffer[] = [];
    let bytes = 0;
    for (let cluster = first; cluster < END_OF_CHAIN; cluster = await this.next(cluster)) {
      if (bytes >= MAX_FOLDER_BYTES)
        throw jobError('verify-mismatch', `${this.drive}: the folder ${what} runs past 65,536 entries.`);
      const piece = await this.readAt(this.clusterAt(this.checked(cluster, what)), this.geometry.clusterBytes);
      pieces.push(piece);
      bytes += piece.length;
    }
    return listDirectory(Buffer.concat(pieces));
  }
}

/** Reads `length` bytes at `position` of a file whose bytes lie at `runs`. */
export async function readRuns(
  readAt: ReadAt,
  runs: readonly ByteExtent[],
  position: number,
  length: number,
): Promise<Buffer> {
  const pieces: Buffer[] = [];
  let skip = position;
  let left = length;
  for (const [offset, size] of runs) {
    if (left === 0) break;
    if (skip >= size) {
      skip -= size;
      continue;
    }
    const take = Math.min(size - skip, left);
    pieces.push(await readAt(offset + skip, take));
    left -= take;
    skip = 0;
  }
  return Buffer.concat(pieces);
}
