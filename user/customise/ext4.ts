/**
 * Does a path exist in an image's ext2/3/4 root filesystem? Enough of ext4 to answer that for the
 * few paths customisation looks for (/etc/cloud, /boot/firmware, imager_custom, rpi-preseed's
 * unit): the superblock, the group descriptors, inodes, extent trees and block maps, and directory
 * blocks read linearly (an htree's blocks are ordinary directory blocks too). Read only, and every
 * read bounded: by the partition's size, by the limits below, and by a budget of blocks per lookup.
 */
import type { ReadAt } from '../../node/read-at.js';

const SUPERBLOCK_OFFSET = 1024;
const EXT4_MAGIC = 0xef53;
const INCOMPAT_64BIT = 0x80;
const EXTENTS_FLAG = 0x80000;
const INLINE_DATA_FLAG = 0x10000000;
const EXTENT_MAGIC = 0xf30a;
const ROOT_INODE = 2;
/** Extent trees are at most 5 deep (ext4's own limit). */
const MAX_EXTENT_DEPTH = 5;
/** Directory bytes read per directory; a directory with ~65,000 entries fits. */
const MAX_DIRECTORY_BYTES = 4 * 1024 * 1024;
/** Path components looked up, at most. */
const MAX_DEPTH = 16;

export type PathKind = 'file' | 'directory' | 'other';

interface Geometry {
  blockSize: number;
  inodesPerGroup: number;
  inodeSize: number;
  descriptorSize: number;
  firstDataBlock: number;
  groups: number;
  blocks: number;
}

/** The superblock's geometry, or null when the partition holds no ext2/3/4 filesystem (or one larger than it). */
function parseSuperblock(sb: Buffer, partitionBytes: number): Geometry | null {
  if (sb.length < 1024 || sb.readUInt16LE(56) !== EXT4_MAGIC) return null;
  const logBlock = sb.readUInt32LE(24);
  if (logBlock > 6) return null;
  const blockSize = 1024 << logBlock;
  const incompat = sb.readUInt32LE(96);
  const blocks = sb.readUInt32LE(4) + (incompat & INCOMPAT_64BIT ? sb.readUInt32LE(336) * 2 ** 32 : 0);
  const blocksPerGroup = sb.readUInt32LE(32);
  const inodesPerGroup = sb.readUInt32LE(40);
  const revision = sb.readUInt32LE(76);
  const inodeSize = revision === 0 ? 128 : sb.readUInt16LE(88);
  const descriptorSize = incompat & INCOMPAT_64BIT ? sb.readUInt16LE(254) : 32;
  const firstDataBlock = sb.readUInt32LE(20);
  if (
    blocks === 0 ||
    blocksPerGroup === 0 ||
    inodesPerGroup === 0 ||
    inodeSize < 128 ||
    inodeSize > blockSize ||
    (inodeSize & (inodeSize - 1)) !== 0
  )
    return null;
  if (descriptorSize < 32 || descriptorSize > 1024 || blocks * blockSize > partitionBytes) return null;
  return {
    blockSize,
    inodesPerGroup,
    inodeSize,
    descriptorSize,
    firstDataBlock,
    groups: Math.ceil((blocks - firstDataBlock) / blocksPerGroup),
    blocks,
  };
}

interface Inode {
  mode: number;
  size: number;
  flags: number;
  block: Buffer;
}

/** An ext2/3/4 filesystem in a partition, for path lookups. */
export class Ext4Reader {
  private constructor(
    private readonly readAt: ReadAt,
    private readonly offset: number,
    private readonly geometry: Geometry,
  ) {}

  /** The filesystem of the partition at `offset` (`size` bytes), or null when it has none. */
  static async open(readAt: ReadAt, offset: number, size: number): Promise<Ext4Reader | null> {
    const geometry = parseSuperblock(await readAt(offset + SUPERBLOCK_OFFSET, 1024), size);
    return geometry === null ? null : new Ext4Reader(readAt, offset, geometry);
  }

  /** What `path` (absolute, no links followed) is, or null when it does not exist or cannot be read. */
  async kind(path: string): Promise<PathKind | null> {
    const parts = path.split('/').filter((p) => p !== '');
    if (parts.length > MAX_DEPTH) return null;
    let inode = ROOT_INODE;
    let type = 2;
    for (const part of parts) {
      const found = await this.lookup(inode, part);
      if (found === null) return null;
      [inode, type] = found;
    }
    return type === 2 ? 'directory' : type === 1 ? 'file' : 'other';
  }

  private async block(n: number, count = 1): Promise<Buffer | null> {
    if (n < this.geometry.firstDataBlock || n + count > this.geometry.blocks) return null;
    const length = count * this.geometry.blockSize;
    const bytes = await this.readAt(this.offset + n * this.geometry.blockSize, length);
    return bytes.length === length ? bytes : null;
  }

  private async inode(n: number): Promise<Inode | null> {
    const { inodesPerGroup, inodeSize, descriptorSize, firstDataBlock, blockSize, groups } = this.geometry;
    const group = Math.floor((n - 1) / inodesPerGroup);
    if (n < 1 || group >= groups) return null;
    const descriptorBytes = group * descriptorSize;
    const descriptors = await this.block(firstDataBlock + 1 + Math.floor(descriptorBytes / blockSize));
    if (descriptors === null) return null;
    const at = descriptorBytes % blockSize;
    const table =
      descriptors.readUInt32LE(at + 8) + (descriptorSize >= 64 ? descriptors.readUInt32LE(at + 0x28) * 2 ** 32 : 0);
    const index = (n - 1) % inodesPerGroup;
    const block = await this.block(table + Math.floor((index * inodeSize) / blockSize));
    if (block === null) return null;
    const raw = block.subarray((index * inodeSize) % blockSize, ((index * inodeSize) % blockSize) + 128);
    return {
      mode: raw.readUInt16LE(0),
      size: raw.readUInt32LE(4) + raw.readUInt32LE(108) * 2 ** 32,
      flags: raw.readUInt32LE(32),
      block: Buffer.from(raw.subarray(40, 100)),
    };
  }

  /** The file blocks of an inode, in order, up to `limit` blocks; null when its map cannot be read. */
  private async blocks(inode: Inode, limit: number): Promise<number[] | null> {
    if ((inode.flags & INLINE_DATA_FLAG) !== 0) return null;
    if ((inode.flags & EXTENTS_FLAG) !== 0) {
      const out: number[] = [];
      return (await this.extents(inode.block, 0, out, limit)) ? out : null;
    }
    const out: number[] = [];
    for (let i = 0; i < 12 && out.length < limit; i++) out.push(inode.block.readUInt32LE(i * 4));
    const perBlock = this.geometry.blockSize / 4;
    const indirect = async (n: number, depth: number): Promise<boolean> => {
      if (n === 0 || out.length >= limit) return true;
      const block = await this.block(n);
      if (block === null) return false;
      for (let i = 0; i < perBlock && out.length < limit; i++) {
        const next = block.readUInt32LE(i * 4);
        if (depth === 0) out.push(next);
        else if (!(await indirect(next, depth - 1))) return false;
      }
      return true;
    };
    if (!(await indirect(inode.block.readUInt32LE(48), 0)) || !(await indirect(inode.block.readUInt32LE(52), 1)))
      return null;
    return out.filter((n) => n !== 0);
  }

  private async extents(node: Buffer, depth: number, out: number[], limit: number): Promise<boolean> {
    if (depth > MAX_EXTENT_DEPTH || node.length < 12 || node.readUInt16LE(0) !== EXTENT_MAGIC) return false;
    const entries = node.readUInt16LE(2);
    const level = node.readUInt16LE(6);
    if (12 + entries * 12 > node.length) return false;
    for (let i = 0; i < entries && out.length < limit; i++) {
      const at = 12 + i * 12;
      if (level === 0) {
        const length = node.readUInt16LE(at + 4) & 0x7fff;
        const start = node.readUInt16LE(at + 6) * 2 ** 32 + node.readUInt32LE(at + 8);
        for (let b = 0; b < length && out.length < limit; b++) out.push(start + b);
      } else {
        const child = await this.block(node.readUInt16LE(at + 8) * 2 ** 32 + node.readUInt32LE(at + 4));
        if (child === null || !(await this.extents(child, depth + 1, out, limit))) return false;
      }
    }
    return true;
  }

  /** The inode and file type of `name` in directory `dir`, or null. */
  private async lookup(dir: number, name: string): Promise<[number, number] | null> {
    const inode = await this.inode(dir);
    if (inode === null || (inode.mode & 0xf000) !== 0x4000) return null;
    const limit = Math.min(
      Math.ceil(inode.size / this.geometry.blockSize),
      MAX_DIRECTORY_BYTES / this.geometry.blockSize,
    );
    const blocks = await this.blocks(inode, limit);
    if (blocks === null) return null;
    const wanted = Buffer.from(name, 'utf8');
    for (const n of blocks) {
      const block = await this.block(n);
      if (block === null) return null;
      for (let at = 0; at + 8 <= block.length;) {
        const entryInode = block.readUInt32LE(at);
        const recordLength = block.readUInt16LE(at + 4);
        const nameLength = block[at + 6] ?? 0;
        if (recordLength < 8 || at + recordLength > block.length || 8 + nameLength > recordLength) break;
        if (
          entryInode !== 0 &&
          nameLength === wanted.length &&
          block.subarray(at + 8, at + 8 + nameLength).equals(wanted)
        )
          return [entryInode, block[at + 7] ?? 0];
        at += recordLength;
      }
    }
    return null;
  }
}
