/**
 * Which bytes of a qcow2 file each of its structures claims, so that no two claim the same: an
 * L2 table shared by several L1 entries, or a compressed blob shared by many clusters, makes a
 * small file describe any amount of data (a 1 MiB file once claimed 64M clusters through one L2
 * table; 2,000 clusters sharing one 2 KiB deflate blob claimed 4 GiB). qemu never writes either:
 * every table and data cluster has a host cluster of its own, and compressed clusters only share
 * the tail of a sector (docs/interop/qcow2.txt: "Another compressed cluster may map to the tail
 * of the final sector used by this compressed cluster").
 */
import { jobError, type JobError } from '../../../common/domain/failure.js';

const SECTOR = 512;
/** The compressed-cluster key keeps the sector count below the offset: at most 2^13 sectors (2 MiB clusters). */
const SECTOR_BITS = 13n;
const NONE = 0;
const COMPRESSED = 1;
const OTHER = 2;

export class HostClusters {
  /** What each host cluster of the file holds: NONE, COMPRESSED data, or one OTHER structure. */
  private readonly use: Uint8Array;
  /** Compressed clusters: file offset << SECTOR_BITS | (sectors - 1), to be sorted by offset. */
  private compressedKeys = new BigUint64Array(1024);
  private compressedCount = 0;

  constructor(
    private readonly fileSize: number,
    private readonly clusterBits: number,
    private readonly name: string,
  ) {
    this.use = new Uint8Array(Math.ceil(fileSize / 2 ** clusterBits));
  }

  private corrupt(why: string): JobError {
    return jobError(
      'source-corrupt',
      `${this.name} is a corrupt qcow2 image: ${why}. Check it with qemu-img check ${this.name}.`,
    );
  }

  /**
   * Claims `length` bytes at `offset` for one structure (a table or a data cluster), which must
   * start on a cluster boundary and share no cluster with anything else. Bytes past the end of
   * the file are not claimed: reading them is what tells a truncated file.
   */
  claim(offset: number, length: number, what: string): void {
    const size = 2 ** this.clusterBits;
    if (offset % size !== 0)
      throw this.corrupt(`${what} is at file byte ${offset}, which is not on a cluster boundary`);
    const last = Math.min(offset + length, this.fileSize);
    for (let cluster = offset / size; cluster * size < last; cluster++) {
      if (this.use[cluster] !== NONE)
        throw this.corrupt(
          `${what} is at file byte ${cluster * size}, which also holds ${this.use[cluster] === COMPRESSED ? 'compressed data' : 'another table or cluster'}`,
        );
      this.use[cluster] = OTHER;
    }
  }

  /** Notes a compressed cluster's extent: its host clusters may hold other compressed data only. */
  compressed(extent: { offset: number; length: number }, guestCluster: number): void {
    const first = Math.floor(extent.offset / 2 ** this.clusterBits);
    const last = Math.min(extent.offset + extent.length, this.fileSize);
    for (let cluster = first; cluster * 2 ** this.clusterBits < last; cluster++) {
      if (this.use[cluster] === OTHER)
        throw this.corrupt(
          `the compressed data of guest cluster ${guestCluster} is at file byte ${extent.offset}, inside another table or cluster`,
        );
      this.use[cluster] = COMPRESSED;
    }
    if (this.compressedCount === this.compressedKeys.length) {
      const grown = new BigUint64Array(this.compressedKeys.length * 2);
      grown.set(this.compressedKeys);
      this.compressedKeys = grown;
    }
    const sectors = ((extent.offset % SECTOR) + extent.length) / SECTOR;
    this.compressedKeys[this.compressedCount++] = (BigInt(extent.offset) << SECTOR_BITS) | BigInt(sectors - 1);
  }

  /** Refuses compressed clusters that overlap beyond the last sector of the one before them. */
  checkCompressed(): void {
    const keys = this.compressedKeys.subarray(0, this.compressedCount).sort();
    let previousEnd = 0;
    let previousStart = -1;
    for (const key of keys) {
      const start = Number(key >> SECTOR_BITS);
      const sectors = Number(key & ((1n << SECTOR_BITS) - 1n)) + 1;
      if (start === previousStart || start < previousEnd - SECTOR + 1) {
        throw this.corrupt(`several compressed clusters share the data at file byte ${start}`);
      }
      previousStart = start;
      previousEnd = (Math.floor(start / SECTOR) + sectors) * SECTOR;
    }
  }
}
